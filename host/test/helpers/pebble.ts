import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { get } from 'node:https';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../../test/helpers/ports.js';
import { tempDir } from '../../../test/helpers/temp.js';

const run = promisify(execFile);

/**
 * A real ACME server on 127.0.0.1 for a test: Debian's pebble (Let's Encrypt's test CA), which validates each
 * challenge for real on the ports it is given (the test host's plain HTTP and HTTPS ports), and resolves names
 * through pebble-challtestsrv's DNS, which answers 127.0.0.1 for every A query (and nothing for AAAA: the edge
 * listens on IPv4 only). Its directory is HTTPS, signed by a root of its own (made with openssl): the file a
 * host gives to --acme-ca-root. Both programs are stopped by their PIDs.
 */
export interface Pebble {
  /** The ACME directory URL. */
  readonly directory: string;
  /** The PEM file of the root that signs the directory's HTTPS certificate. */
  readonly directoryRoot: string;
  /** The root pebble signs certificates with (its management interface's /roots/0): made anew at each start of pebble. */
  issuingRoot(): Promise<string>;
  stop(): Promise<void>;
}

export async function startPebble({ httpPort, tlsPort }: { httpPort: number; tlsPort: number }): Promise<Pebble> {
  const dir = await tempDir('runplan-pebble-');
  const directoryRoot = join(dir, 'root.pem');
  await directoryCertificate(dir, directoryRoot);
  const [acmePort, managementPort, dnsPort, challtestManagementPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const started: ChildProcess[] = [];
  const stop = async () => {
    for (const child of started.reverse()) await stopChild(child);
  };
  try {
    const dns = spawnLogged(
      '/usr/bin/pebble-challtestsrv',
      ['-dns01', `127.0.0.1:${dnsPort}`, '-management', `127.0.0.1:${challtestManagementPort}`, '-http01', '', '-https01', '', '-tlsalpn01', '', '-defaultIPv4', '127.0.0.1', '-defaultIPv6', ''],
      {},
    );
    started.push(dns.child);
    await dns.said(/Starting management server/i, 'pebble-challtestsrv');
    await writeFile(
      join(dir, 'pebble.json'),
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${acmePort}`,
          managementListenAddress: `127.0.0.1:${managementPort}`,
          certificate: join(dir, 'directory.pem'),
          privateKey: join(dir, 'directory.key'),
          httpPort,
          tlsPort,
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
        },
      }),
    );
    // No random sleep before a validation, and no nonce refused at random: a test that checks the edge, not its retries.
    const pebble = spawnLogged('/usr/bin/pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' });
    started.push(pebble.child);
    await pebble.said(/ACME directory available at/, 'pebble');
  } catch (error) {
    await stop();
    throw error;
  }
  const directoryRootPem = await readFile(directoryRoot, 'utf8');
  return {
    directory: `https://127.0.0.1:${acmePort}/dir`,
    directoryRoot,
    issuingRoot: () => fetchText(`https://127.0.0.1:${managementPort}/roots/0`, directoryRootPem),
    stop,
  };
}

/** A root (the company CA's, as it were) and the directory's certificate for 127.0.0.1 signed by it. */
async function directoryCertificate(dir: string, rootFile: string): Promise<void> {
  const rootKey = join(dir, 'root.key');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=runplan test ACME directory root',
    '-keyout',
    rootKey,
    '-out',
    rootFile,
  ]);
  const csr = join(dir, 'directory.csr');
  await run('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', join(dir, 'directory.key'), '-out', csr]);
  const extensions = join(dir, 'directory.ext');
  await writeFile(extensions, 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  await run('openssl', ['x509', '-req', '-in', csr, '-CA', rootFile, '-CAkey', rootKey, '-CAcreateserial', '-days', '2', '-extfile', extensions, '-out', join(dir, 'directory.pem')]);
}

function spawnLogged(program: string, args: string[], env: Record<string, string>): { child: ChildProcess; said(line: RegExp, name: string): Promise<void> } {
  const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
  let output = '';
  const waiters: Array<() => void> = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const w of waiters) w();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return {
    child,
    said: (line, name) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (line.test(output)) resolve();
        };
        waiters.push(check);
        check();
        child.once('exit', (code, signal) => reject(new Error(`${name} exited (${code ?? signal}) before it served:\n${output}`)));
        setTimeout(() => reject(new Error(`${name} did not start within 20 s:\n${output}`)), 20_000).unref();
      }),
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const killed = setTimeout(() => child.pid !== undefined && process.kill(child.pid, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(killed);
}

function fetchText(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { ca, agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: HTTP ${res.statusCode}: ${body}`))));
    })
      .on('timeout', function (this: { destroy(e: Error): void }) {
        this.destroy(new Error(`${url} timed out`));
      })
      .on('error', reject);
  });
}
