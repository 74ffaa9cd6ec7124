import { X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { freePort } from '../../test/helpers/ports.js';
import { acmeSettings } from '../src/acme-settings.js';
import { type Pebble, startPebble } from './helpers/pebble.js';
import { TestHost } from './helpers/test-host.js';

/**
 * runplan-host's edge gets its certificates from a real ACME server: Debian's pebble on 127.0.0.1, which validates
 * each challenge for real on the host's plain HTTP and HTTPS ports, resolving the test domain through
 * pebble-challtestsrv's DNS. A host initialised with --acme-email, --acme-directory and --acme-ca-root serves its
 * console and a pushed application with certificates whose chain goes up to pebble's issuing root (and not to the
 * edge's own CA), while no other name's handshake fails.
 */

const DOMAIN = `acme-${process.pid}.test`;
const EMAIL = 'ops@example.com';

interface Served {
  readonly certificate: PeerCertificate;
  readonly authorized: boolean;
  readonly error: string | undefined;
}

/** A TLS handshake with `servername` on the edge's HTTPS port, its chain checked against `ca` alone. */
function handshake(port: number, servername: string, ca: string): Promise<Served> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
      const served = { certificate: socket.getPeerCertificate(true), authorized: socket.authorized, error: socket.authorizationError?.message };
      socket.destroy();
      resolve(served);
    });
    socket.setTimeout(30_000, () => socket.destroy(new Error(`TLS handshake with ${servername} timed out`)));
    socket.once('error', reject);
  });
}

/** GET over HTTPS through the edge to `name`, trusting `ca` alone. */
function get(port: number, name: string, path: string, ca: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, servername: name, headers: { host: `${name}:${port}` }, ca, agent: false, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET https://${name}${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** GET over plain HTTP through the edge to `name`. */
function plainGet(port: number, name: string, path: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host: `${name}:${port}` }, agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET http://${name}${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** The issuers of a served chain, leaf first. */
function issuers(served: Served): string[] {
  const out: string[] = [];
  let cert: PeerCertificate & { issuerCertificate?: PeerCertificate } = served.certificate;
  const seen = new Set<string>();
  while (cert?.raw !== undefined && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    out.push(cert.issuer.CN);
    cert = (cert as { issuerCertificate?: PeerCertificate }).issuerCertificate as PeerCertificate;
  }
  return out;
}

describe('runplan-host gets its certificates from an ACME CA (pebble)', () => {
  let host: TestHost;
  let pebble: Pebble;
  let pebbleRoot: string;
  let localRoot: string;
  const consoleName = `console.${DOMAIN}`;
  // The application the push test deploys, which the custom-domain test serves under another name.
  let appId: string | undefined;
  let appName: string | undefined;

  beforeAll(async () => {
    host = await TestHost.create({ initArgs: ['--domain', DOMAIN] });
    // First a host of the edge's own CA, whose Caddy goes on when serve stops: moved to ACME by init, then taken over.
    await host.serve({ keepApps: true });
    await host.stop();
    // Pebble validates TLS-ALPN-01 on a port where nothing listens: every certificate is validated by HTTP-01 on the
    // edge's plain port (Caddy falls back to it at once), through the routes of the console's HTTP→HTTPS redirect.
    pebble = await startPebble({ httpPort: host.ports.http, tlsPort: await freePort() });
    // init again, with every option it was given and the ACME ones: how a host is moved to ACME certificates.
    const init = await host.cli([
      'init',
      '--ssh-port',
      `${host.ports.ssh}`,
      '--https-port',
      `${host.ports.https}`,
      '--http-port',
      `${host.ports.http}`,
      '--ssh-user',
      host.sshUser,
      '--cache-dir',
      inject('sharedCacheDir'),
      '--domain',
      DOMAIN,
      '--acme-email',
      EMAIL,
      '--acme-directory',
      pebble.directory,
      '--acme-ca-root',
      pebble.directoryRoot,
    ]);
    expect(init.code, `${init.stdout}${init.stderr}`).toBe(0);
    await host.serve();
    expect(host.serveOutput).toMatch(/the edge \(Caddy, PID \d+\) an earlier serve left running is adopted; its configuration is not the one this edge's settings make/);
    pebbleRoot = await pebble.issuingRoot();
    localRoot = await readFile(host.rootCertificate, 'utf8');
  }, 120_000);

  afterAll(async () => {
    await host?.dispose();
    await pebble?.stop();
  });

  it('keeps the ACME settings init was given, and status names the CA', async () => {
    const settings = JSON.parse(await readFile(join(host.data, 'settings.json'), 'utf8')) as { acme?: unknown };
    expect(settings.acme).toEqual({ email: EMAIL, directory: pebble.directory, caRoot: pebble.directoryRoot });
    const status = await host.cli(['status']);
    expect(status.stdout).toContain(`certificates from the ACME CA ${pebble.directory} (account ${EMAIL})`);
  });

  it("takes Let's Encrypt's production directory when --acme-email comes alone, and no ACME without it", () => {
    expect(acmeSettings({ email: EMAIL })).toEqual({ email: EMAIL, directory: 'https://acme-v02.api.letsencrypt.org/directory' });
    expect(acmeSettings({})).toBeUndefined();
  });

  it('refuses ACME options that cannot work, naming the option, and keeps the settings', async () => {
    const before = await readFile(join(host.data, 'settings.json'), 'utf8');
    const refused = async (args: string[]) => {
      const r = await host.cli(['init', '--domain', DOMAIN, ...args, '--json']);
      expect(r.code).toBe(2);
      return (JSON.parse(r.stdout) as { error: { code: string; message: string; fix: string } }).error;
    };
    const email = await refused(['--acme-email', 'ops.example.com']);
    expect(email.code).toBe('RUNPLAN_HOST_E_INPUT_ACME_EMAIL');
    expect(email.message).toContain('--acme-email "ops.example.com" is not an email address');
    expect((await refused(['--acme-directory', pebble.directory])).code).toBe('RUNPLAN_HOST_E_INPUT_ACME_EMAIL');
    const directory = await refused(['--acme-email', EMAIL, '--acme-directory', pebble.directory.replace('https:', 'http:')]);
    expect(directory.code).toBe('RUNPLAN_HOST_E_INPUT_ACME_DIRECTORY');
    expect(directory.message).toContain('is not an https:// URL');
    const missing = await refused(['--acme-email', EMAIL, '--acme-ca-root', join(host.data, 'no-such-root.pem')]);
    expect(missing.code).toBe('RUNPLAN_HOST_E_INPUT_ACME_CA_ROOT');
    expect(missing.message).toContain('cannot be read (ENOENT)');
    const notPem = await refused(['--acme-email', EMAIL, '--acme-ca-root', join(host.data, 'settings.json')]);
    expect(notPem.code).toBe('RUNPLAN_HOST_E_INPUT_ACME_CA_ROOT');
    expect(notPem.fix).toContain('PEM file');
    const local = await host.cli(['init', '--acme-email', EMAIL, '--json']);
    expect(JSON.parse(local.stdout).error.code).toBe('RUNPLAN_HOST_E_INPUT_USAGE');
    expect(JSON.parse(local.stdout).error.message).toContain('no ACME certificate authority issues certificates for localhost');
    expect(await readFile(join(host.data, 'settings.json'), 'utf8')).toBe(before);
  });

  it("serves the console's name with a certificate of pebble's, which the edge's own CA does not sign", async () => {
    const served = await handshake(host.ports.https, consoleName, pebbleRoot);
    expect(served.error).toBeUndefined();
    expect(served.authorized).toBe(true);
    expect(served.certificate.subjectaltname).toContain(`DNS:${consoleName}`);
    expect(issuers(served)[0]).toMatch(/^Pebble Intermediate CA/);
    const againstLocal = await handshake(host.ports.https, consoleName, localRoot);
    expect(againstLocal.authorized).toBe(false);
    // The console answers over HTTPS, and its plain HTTP still redirects (the challenges are answered before that redirect).
    expect((await get(host.ports.https, consoleName, '/', pebbleRoot)).status).toBeLessThan(500);
    expect((await plainGet(host.ports.http, consoleName, '/')).status).toBe(308);
  });

  it('gets a certificate for any name the host serves (a file in edge/names, as a custom domain has), and for no other', async () => {
    const served = `www-${process.pid}.${DOMAIN}`;
    await writeFile(join(host.data, 'edge', 'names', served), '', { mode: 0o600 });
    const answer = await handshake(host.ports.https, served, pebbleRoot);
    expect(answer.error).toBeUndefined();
    expect(answer.certificate.subjectaltname).toContain(`DNS:${served}`);
    expect(issuers(answer)[0]).toMatch(/^Pebble Intermediate CA/);
    const log = await readFile(join(host.data, 'edge', 'caddy.log'), 'utf8');
    const tried = [...log.matchAll(/"challenge_type":"([a-z0-9-]+)"/g)].map((m) => m[1]);
    console.log(`runplan-host measured: ACME challenges Caddy tried with pebble (console, then ${served}): ${tried.join(', ')}`);
    expect(tried).toContain('http-01');
    // The ask says no: the handshake fails, and no order is made at the CA (none of the host's rate limits spent).
    const other = `other-${process.pid}.${DOMAIN}`;
    await expect(handshake(host.ports.https, other, pebbleRoot)).rejects.toThrow();
    const orders = (name: string, text: string) => text.split('\n').filter((l) => l.includes(`"${name}"`) && /"logger":"tls\.(obtain|issuance)/.test(l));
    expect(orders(served, log).length).toBeGreaterThan(0);
    expect(orders(other, await readFile(join(host.data, 'edge', 'caddy.log'), 'utf8'))).toEqual([]);
  });

  it("serves a pushed application at its default name with pebble's certificate, while the console's handshakes go on", { timeout: 300_000 }, async () => {
    const key = await host.key('alice', 'acme');
    const app = await host.json<{ id: string; gitRemote: string; url: string }>(['create', '--type', 'node', 'facts', '--region', 'par', '--org', 'acme']);
    // The application's name as the host makes it (app_… or app-…), from the URL the API gives.
    const name = new URL(app.url).hostname;
    expect(name.endsWith(`.${DOMAIN}`)).toBe(true);
    for (const [variable, value] of [
      ['CC_HEALTH_CHECK_PATH', '/health'],
      ['GREETING', 'hello'],
    ] as const)
      expect((await host.cli(['env', 'set', variable, value, '--app', app.id])).code).toBe(0);
    const repo = await host.repository('host/facts');
    // The remote names the host by its domain, which only pebble's DNS resolves: git reaches sshd on 127.0.0.1.
    const remote = new URL(app.gitRemote.replace(/^git\+ssh:/, 'ssh:'));
    remote.hostname = '127.0.0.1';
    await host.git(repo, ['remote', 'add', 'runplan', remote.toString()]);

    // Handshakes with the console's name all along the push and the new name's certificate: none may fail.
    let asking = true;
    const consoleFailures: string[] = [];
    let consoleHandshakes = 0;
    const consoleLoop = (async () => {
      while (asking) {
        consoleHandshakes += 1;
        try {
          const served = await handshake(host.ports.https, consoleName, pebbleRoot);
          if (!served.authorized) consoleFailures.push(served.error ?? 'not authorized');
        } catch (error) {
          consoleFailures.push((error as Error).message);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const push = await host.push(repo, 'runplan', key);
    // The default name is a DNS name an ACME CA issues for (app-<uuid>: no "_", which CAs refuse).
    expect(name).toMatch(/^app-[0-9a-f-]{36}\./);
    const served = await handshake(host.ports.https, name, pebbleRoot).catch((error: Error) => error);
    asking = false;
    await consoleLoop;
    expect(push.code, push.output).toBe(0);
    expect(consoleFailures).toEqual([]);
    expect(consoleHandshakes).toBeGreaterThan(0);
    const caddyLog = () => readFile(join(host.data, 'edge', 'caddy.log'), 'utf8');
    if (served instanceof Error) {
      const errors = (await caddyLog()).split('\n').filter((l) => /"level":"error"/.test(l));
      throw new Error(`${served.message}; Caddy's errors:\n${errors.slice(-6).join('\n')}`);
    }
    expect(served.error).toBeUndefined();
    expect(served.authorized).toBe(true);
    expect(served.certificate.subjectaltname).toContain(`DNS:${name}`);
    expect(issuers(served)[0]).toMatch(/^Pebble Intermediate CA/);
    // Not the edge's own CA: a client that trusts only it refuses this chain.
    expect((await handshake(host.ports.https, name, localRoot)).authorized).toBe(false);
    const leaf = new X509Certificate(served.certificate.raw);
    expect(leaf.checkIssued(new X509Certificate(localRoot))).toBe(false);

    const answer = await get(host.ports.https, name, '/', pebbleRoot);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ app: 'host-facts', greeting: 'hello', forwardedProto: 'https' });

    console.log(`runplan-host measured: ${name} served with pebble's certificate; console handshakes during the push: ${consoleHandshakes}, none failed`);
    appId = app.id;
    appName = name;
  });

  it("gets a custom domain its own certificate of pebble's on first request, which another organization cannot take; domain rm ends it while the other names go on", { timeout: 120_000 }, async () => {
    expect(appId).toBeDefined();
    const domain = `shop-${process.pid}.example.test`;
    expect((await host.cli(['domain', 'add', domain, '--app', appId as string])).code).toBe(0);
    await host.cli(['create', '--type', 'node', 'rival', '--region', 'par', '--org', 'globex']);
    const taken = await host.cli(['domain', 'add', domain, '--app', 'rival', '--org', 'globex']);
    expect(taken.stderr).toContain('RUNPLAN_HOST_E_DOMAIN_TAKEN');
    expect(taken.stderr).not.toContain(appId as string);

    // Handshakes with the console's and the application's default name meanwhile: none may fail.
    let asking = true;
    const failures: string[] = [];
    const others = (async () => {
      while (asking) {
        for (const other of [consoleName, appName as string]) {
          const answer = await handshake(host.ports.https, other, pebbleRoot).catch((error: Error) => ({ authorized: false, error: error.message }));
          if (!answer.authorized) failures.push(`${other}: ${answer.error}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      const served = await handshake(host.ports.https, domain, pebbleRoot);
      expect(served.error).toBeUndefined();
      expect(served.certificate.subjectaltname).toContain(`DNS:${domain}`);
      expect(issuers(served)[0]).toMatch(/^Pebble Intermediate CA/);
      const answer = await get(host.ports.https, domain, '/', pebbleRoot);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ app: 'host-facts', forwardedProto: 'https', forwardedHost: `${domain}:${host.ports.https}` });

      expect((await host.cli(['domain', 'rm', domain])).code).toBe(0);
      // No longer the host's: the name reaches no application (its certificate, already issued, may stay in Caddy's cache).
      const gone = await get(host.ports.https, domain, '/', pebbleRoot).catch((error: Error) => error);
      if (!(gone instanceof Error)) expect(gone.status).toBe(404);
      await expect(readFile(join(host.data, 'edge', 'names', domain))).rejects.toThrow();
    } finally {
      asking = false;
      await others;
    }
    expect(failures).toEqual([]);
  });
});
