import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { bootId, formatIdentity, identifyProcess, isRunning, parseIdentity } from 'runplan/process';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../../test/helpers/processes.js';
import { freePort } from '../../test/helpers/ports.js';
import { tempDir } from '../../test/helpers/temp.js';
import { AppUpstreams } from '../src/edge/app-upstreams.js';
import { adminCall } from '../src/edge/caddy-admin.js';
import { type CaddyRoute, appRoute, caddyFiles, initialConfig } from '../src/edge/caddy-config.js';
import { CaddyEdge } from '../src/edge/caddy-edge.js';
import { findCaddy, runCaddy } from '../src/edge/caddy-process.js';
import { HostErrors } from '../src/errors.js';
import { appLabel } from '../src/git/app-id.js';
import type { EdgeOptions } from '../src/edge/edge.js';
import { ADOPTED_END } from '../src/supervision/adopted-process.js';
import { address, httpGet, httpsGet, startApp, stopApp } from './helpers/edge-requests.js';

/** A folder of a host's edge and upstreams, with free ports: what two serves of one data folder share. */
async function edgeFolder(): Promise<{ options: EdgeOptions; upstreams: AppUpstreams; dir: string }> {
  const root = await tempDir('runplan-adopt-');
  const upstreamsDir = join(root, 'run', 'apps');
  const options: EdgeOptions = { dir: join(root, 'edge'), listenAddress: '127.0.0.1', httpsPort: await freePort(), httpPort: await freePort(), apps: { domain: 'localhost', upstreams: upstreamsDir } };
  return { options, upstreams: new AppUpstreams(upstreamsDir), dir: options.dir };
}

const readConfig = async (dir: string) => (await adminCall(join(dir, 'admin.sock'), { method: 'GET', path: '/config/' })).body;

/** `sleep 600`, a process that is not Caddy: an identity file may name its PID. */
async function bystander(): Promise<ChildProcess> {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  await new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  return child;
}

describe('CaddyEdge adopts the Caddy an earlier serve left running (real Caddy on 127.0.0.1)', () => {
  const cleanup: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('a second CaddyEdge on the same folder adopts the Caddy the first let go: the same PID, its routes, names and certificate kept, no request failed during the hand-over', async () => {
    const { options, upstreams, dir } = await edgeFolder();
    const app = await startApp();
    cleanup.push(
      () => stopApp(app),
      () => upstreams.removeAll(),
    );
    const first = new CaddyEdge(options);
    const run = await first.start();
    // Once let go, first.stop() stops nothing: the test stops it itself if it fails before the adoption.
    const identity = identifyProcess(run.pid as number);
    cleanup.push(() => identity && isRunning(identity) && process.kill(identity.pid, 'SIGKILL'));
    const ca = readFileSync(first.rootCertificate, 'utf8');
    const id = `app_${randomUUID()}`;
    const host = `${appLabel(id)}.localhost`;
    const consoleName = `console-${randomUUID()}.localhost`;
    await upstreams.point(id, address(app));
    await first.serveApp(host);
    await first.setRoute(consoleName, app.port, { httpsOnly: true });
    const configBefore = await readConfig(dir);

    // Clients as browsers (kept-alive connections) and as curl (one per request), all through the hand-over.
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    cleanup.push(() => agent.destroy());
    let running = true;
    let answered = 0;
    const failures: string[] = [];
    const loops = [agent, agent, undefined, undefined].map(async (client) => {
      while (running) {
        const answer = await httpsGet(options.httpsPort, host, ca, {}, client).catch((e: Error) => ({ status: 0, body: e.message }));
        if (answer.status === 200) answered++;
        else failures.push(`${answer.status} ${answer.body.slice(0, 80)}`);
      }
    });
    await new Promise((r) => setTimeout(r, 300));

    first.detach();
    expect(isAlive(run.pid as number)).toBe(true);
    const lines: string[] = [];
    const second = new CaddyEdge(options, { log: (line) => lines.push(line) });
    cleanup.push(() => second.stop());
    const adopted = await second.start();
    expect(adopted.pid).toBe(run.pid);
    expect(second.pid).toBe(run.pid);
    expect(lines).toEqual([`the edge (Caddy, PID ${run.pid}) an earlier serve left running is adopted, with its 1 route(s) and the applications' upstreams`]);
    expect(await second.routes()).toEqual({ [consoleName]: app.port });
    // Nothing reloaded: the same configuration, so the same certificates in Caddy's cache.
    expect(await readConfig(dir)).toBe(configBefore);
    expect(readFileSync(second.rootCertificate, 'utf8')).toBe(ca);
    expect(parseIdentity(readFileSync(join(dir, 'caddy.identity'), 'utf8'))?.pid).toBe(run.pid);
    // A new name's certificate: Caddy's own `ask` says yes, with no serve's server anywhere.
    const other = `app_${randomUUID()}`;
    await upstreams.point(other, address(app));
    await second.serveApp(`${appLabel(other)}.localhost`);
    expect((await httpsGet(options.httpsPort, `${appLabel(other)}.localhost`, ca)).status).toBe(200);
    // The adopted record is the edge's own: setting the console's route as it is changes nothing, and it is served.
    await second.setRoute(consoleName, app.port, { httpsOnly: true });
    expect((await httpGet(options.httpPort, consoleName)).status).toBe(308);
    await new Promise((r) => setTimeout(r, 300));
    running = false;
    await Promise.all(loops);
    console.log(`hand-over of Caddy (PID ${run.pid}) from one CaddyEdge to another: ${answered} requests answered, ${failures.length} failed`);
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(0);

    // Adopted, it is watched by its identity: its death ends the run, and start() then starts a new one with every route.
    process.kill(run.pid as number, 'SIGKILL');
    expect(await adopted.ended).toBe(ADOPTED_END);
    const again = await second.start();
    expect(again.pid).not.toBe(run.pid);
    expect(await second.routes()).toEqual({ [consoleName]: app.port });
    expect((await httpsGet(options.httpsPort, host, ca)).status).toBe(200);
    await second.stop();
    expect(isAlive(again.pid as number)).toBe(false);
    for (const file of ['admin.sock', 'caddy.pid', 'caddy.identity']) expect(existsSync(join(dir, file)), file).toBe(false);
  });

  it('starts a new Caddy over a stale identity file: the process gone, its PID now another process’s, or a live process that is no Caddy, none of them signalled', async () => {
    const { options, dir } = await edgeFolder();
    const edge = new CaddyEdge(options);
    cleanup.push(() => edge.stop());
    const gone = await edge.start();
    const goneIdentity = readFileSync(join(dir, 'caddy.identity'), 'utf8');
    await edge.stop();
    const other = await bystander();
    cleanup.push(() => other.kill('SIGKILL'));
    const otherIdentity = identifyProcess(other.pid as number);
    if (otherIdentity === undefined) throw new Error('the bystander has no identity');
    const stale = [
      ['a Caddy that is gone', goneIdentity],
      ['its PID held by another process (another start time)', formatIdentity({ ...otherIdentity, startTime: `${Number(otherIdentity.startTime) + 1}` })],
      ['its PID held by another process (another boot)', formatIdentity({ ...otherIdentity, bootId: `${bootId()}-before` })],
      ['a live process that is no `caddy run`', formatIdentity(otherIdentity)],
    ] as const;
    for (const [what, identity] of stale) {
      writeFileSync(join(dir, 'caddy.identity'), identity);
      const started = await edge.start();
      expect(started.pid, what).not.toBe(gone.pid);
      expect(started.pid, what).not.toBe(other.pid);
      expect(isRunning(otherIdentity), what).toBe(true);
      expect(parseIdentity(readFileSync(join(dir, 'caddy.identity'), 'utf8'))?.pid, what).toBe(started.pid);
      await edge.stop();
    }
  });

  it('stops a leftover Caddy of this folder that does not answer (by its identity) and starts a new one', async () => {
    const { options, dir } = await edgeFolder();
    const first = new CaddyEdge(options);
    const run = await first.start();
    first.detach();
    const identity = identifyProcess(run.pid as number);
    cleanup.push(() => identity && isRunning(identity) && process.kill(identity.pid, 'SIGKILL'));
    // Stopped: it still accepts on its admin socket, and never answers.
    process.kill(run.pid as number, 'SIGSTOP');
    const lines: string[] = [];
    const second = new CaddyEdge(options, { log: (line) => lines.push(line), stopGraceMs: 500 });
    cleanup.push(() => second.stop());
    const started = await second.start();
    expect(started.pid).not.toBe(run.pid);
    expect(isAlive(run.pid as number)).toBe(false);
    expect(lines).toEqual([`the edge (Caddy, PID ${run.pid}) an earlier serve left running is stopped, its admin API does not answer on ${join(dir, 'admin.sock')}; a new one is started`]);
    expect((await second.check()).up).toBe(true);
  }, 30_000);

  it('refuses to start beside a Caddy that answers on its admin socket but that neither its identity file nor its pid file names: it cannot be stopped by its identity', async () => {
    const { options, dir } = await edgeFolder();
    const first = new CaddyEdge(options);
    const run = await first.start();
    first.detach();
    const identity = identifyProcess(run.pid as number);
    cleanup.push(() => identity && isRunning(identity) && process.kill(identity.pid, 'SIGKILL'));
    rmSync(join(dir, 'caddy.identity'));
    rmSync(join(dir, 'caddy.pid'));
    const second = new CaddyEdge(options);
    const refused = await second.start().catch((e: unknown) => e);
    expect(HostErrors.HOST_PART_FAILED.is(refused)).toBe(true);
    expect((refused as Error).message).toContain(`another Caddy already answers on ${join(dir, 'admin.sock')}`);
    expect(second.pid).toBeUndefined();
    expect(isAlive(run.pid as number)).toBe(true);
  });

  it('stops a leftover Caddy its identity file names that runs another configuration, and starts a new one', async () => {
    const { options, dir } = await edgeFolder();
    const elsewhere = join(await tempDir('runplan-adopt-other-'), 'edge');
    const files = caddyFiles(elsewhere);
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(elsewhere, { recursive: true });
    await writeFile(files.config, JSON.stringify({ admin: { disabled: true } }));
    const foreign = runCaddy(findCaddy(), elsewhere, files);
    cleanup.push(async () => {
      foreign.kill('SIGKILL');
      await foreign.ended;
    });
    for (let i = 0; i < 100 && foreign.pid === undefined; i++) await new Promise((r) => setTimeout(r, 20));
    const identity = identifyProcess(foreign.pid as number);
    await mkdir(dir, { recursive: true });
    writeFileSync(join(dir, 'caddy.identity'), formatIdentity(identity as NonNullable<typeof identity>));
    const lines: string[] = [];
    const edge = new CaddyEdge(options, { log: (line) => lines.push(line) });
    cleanup.push(() => edge.stop());
    const started = await edge.start();
    expect(started.pid).not.toBe(foreign.pid);
    await foreign.ended;
    expect(isAlive(foreign.pid as number)).toBe(false);
    expect(lines[0]).toMatch(new RegExp(`^the edge \\(Caddy, PID ${foreign.pid}\\) an earlier serve left running is stopped, it runs another configuration \\(run --config ${files.config} `));
  });

  it('adopts a Caddy left by an older runplan-host (its pid file alone, format 1) and gives it this configuration once through /load, keeping its routes', async () => {
    const { options, upstreams, dir } = await edgeFolder();
    const app = await startApp();
    cleanup.push(
      () => stopApp(app),
      () => upstreams.removeAll(),
    );
    const files = caddyFiles(dir);
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const consoleName = `console-${randomUUID()}.localhost`;
    await writeFile(files.config, JSON.stringify(formatOneConfig(options, [appRoute(consoleName, app.port, { httpsPort: options.httpsPort })])));
    const older = runCaddy(findCaddy(), dir, files);
    cleanup.push(async () => {
      older.kill('SIGKILL');
      await older.ended;
    });
    for (let i = 0; i < 200 && !(existsSync(files.pidFile) && existsSync(files.adminSocket)); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(files.identityFile)).toBe(false);

    const lines: string[] = [];
    const edge = new CaddyEdge(options, { log: (line) => lines.push(line) });
    cleanup.push(() => edge.stop());
    const adopted = await edge.start();
    expect(adopted.pid).toBe(older.pid);
    expect(lines).toEqual([
      `the edge (Caddy, PID ${older.pid}) an earlier serve left running is adopted; it runs the configuration of an older runplan-host (format 1; this one writes format 3): it is given this one once through its admin API (/load), keeping its 1 route(s)`,
    ]);
    const live = JSON.parse(await readConfig(dir));
    expect(live.apps.http.servers.edge['@id']).toBe('runplan-edge-format-3');
    expect(JSON.parse(readFileSync(files.config, 'utf8'))).toEqual(live);
    expect(await edge.routes()).toEqual({ [consoleName]: app.port });
    const ca = readFileSync(edge.rootCertificate, 'utf8');
    const id = `app_${randomUUID()}`;
    await upstreams.point(id, address(app));
    await edge.serveApp(`${appLabel(id)}.localhost`);
    expect((await httpsGet(options.httpsPort, `${appLabel(id)}.localhost`, ca)).status).toBe(200);
    expect((await httpsGet(options.httpsPort, consoleName, ca)).status).toBe(200);
    // Adopted again by the next serve: now as it is, without a /load.
    edge.detach();
    const next: string[] = [];
    const third = new CaddyEdge(options, { log: (line) => next.push(line) });
    cleanup.push(() => third.stop());
    expect((await third.start()).pid).toBe(older.pid);
    expect(next).toEqual([`the edge (Caddy, PID ${older.pid}) an earlier serve left running is adopted, with its 1 route(s) and the applications' upstreams`]);
    await third.stop();
    // SIGTERM: Caddy stops gracefully, with status 0.
    expect(await older.ended).toEqual({ code: 0, signal: null });
  });
});

/**
 * The configuration runplan-host wrote before format 2 (no stamp): each application's unix socket, which serve
 * piped to the release, and the on-demand `ask` answered by a server of serve's own.
 */
function formatOneConfig(options: EdgeOptions, routes: CaddyRoute[]): Record<string, unknown> {
  const config = initialConfig(options, caddyFiles(options.dir), 1, routes) as {
    apps: { http: { servers: Record<string, Record<string, unknown> & { routes: CaddyRoute[] }> }; tls: { automation: { on_demand: { ask: string } } } };
  };
  const servers = config.apps.http.servers;
  const edge = servers.edge as Record<string, unknown> & { routes: CaddyRoute[] };
  delete edge['@id'];
  delete servers.ask;
  edge.routes = edge.routes.map((route) =>
    route['@id'] === 'runplan-apps'
      ? {
          '@id': 'runplan-apps',
          match: [
            {
              header_regexp: { Host: { name: 'app', pattern: '^(app_[0-9a-f-]{36})\\.localhost(?::[0-9]{1,5})?$' } },
              file: { root: '/nonexistent', try_files: ['/{http.request.host.labels.1}.sock'] },
            },
          ],
          handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: 'unix//nonexistent/{http.regexp.app.1}.sock' }], transport: { protocol: 'http', keep_alive: { enabled: false } } }],
          terminal: true,
        }
      : route,
  );
  config.apps.tls.automation.on_demand.ask = 'http://127.0.0.1:1/';
  return config;
}
