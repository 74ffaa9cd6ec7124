import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, fillPlaceholders, listFixtures, prepareFixture } from '../../test/helpers/fixtures.js';
import { type Play1Mirror, standInDistributions, startPlay1Mirror } from '../../test/helpers/play1.js';
import { appHostOf, TestHost } from './helpers/test-host.js';

/**
 * runplan-host deploys each application type it offers (node, ruby, play1): a
 * real git push over SSH of a healthy fixture per type, its expect.json's
 * variables set with `runplan-host env set` first and its requests checked over
 * HTTPS through the edge. It also measures, without asserting any timing, what a
 * push costs (cold, then warm with the cached node_modules layer, under
 * continuous requests) and the resident memory of serve, Caddy and sshd.
 */

/** The simplest healthy fixture of each type that needs nothing the host does not give (no Redis, no registry of its own). */
const FIXTURES = { node: 'express', ruby: 'version-env-exact', play1: 'health-root' } as const;
type AppType = keyof typeof FIXTURES;

const REUSED = '[install] reused cached layer node_modules';

type Expectation = Fixture['expect'];

interface Deployed {
  readonly id: string;
  readonly repo: string;
  /** The fixture's variables and requests, placeholders filled. */
  readonly expect: Pick<Expectation, 'env' | 'requests'>;
}

function fixture(type: AppType): Fixture {
  const found = listFixtures(type).find((f) => f.name === FIXTURES[type]);
  if (!found) throw new Error(`no fixture ${type}/${FIXTURES[type]}`);
  return found;
}

/** VmRSS of a process, in MiB. */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) / 1024;
}

async function pidIn(file: string): Promise<number> {
  return Number((await readFile(file, 'utf8')).trim());
}

const measured = (what: string, value: string) => console.log(`runplan-host measured: ${what}: ${value}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe('runplan-host deploys the three application types', () => {
  let host: TestHost;
  let mirror: Play1Mirror;
  let key: string;
  const apps = new Map<AppType, Deployed>();

  beforeAll(async () => {
    // Play 1.x is downloaded from a mirror (a stand-in framework: no real Play can be had here), a host-level setting of serve.
    mirror = await startPlay1Mirror(await standInDistributions());
    host = await TestHost.create();
    await host.serve({ env: mirror.hostEnv() });
    // For comparison with the figure taken while it serves the three applications.
    measured('RSS of serve (node) just started, no application', `${(await rssMiB(host.servePid as number)).toFixed(1)} MiB`);
    key = await host.key('dev', 'apps');
    for (const type of Object.keys(FIXTURES) as AppType[]) {
      const prepared = await prepareFixture(fixture(type));
      const created = await host.json<{ id: string; gitRemote: string }>(['create', '--type', type, `${type}-app`, '--region', 'par', '--org', 'apps']);
      const repo = await host.repository(prepared.dir);
      await host.git(repo, ['remote', 'add', 'runplan', created.gitRemote]);
      // Only what the host is asked to do: `output` lines name runplan's own port ({{port}}), which the host chooses.
      // Each application runs as its own user (host/src/tenancy/app-users.ts), made when it was created.
      const appUid = String(await host.appUid(created.id));
      const expectation = fillPlaceholders({ env: prepared.expect.env, requests: prepared.expect.requests }, { appUid });
      for (const [name, value] of Object.entries(expectation.env ?? {})) {
        const set = await host.cli(['env', 'set', name, value, '--app', created.id]);
        expect(set.code, set.stdout + set.stderr).toBe(0);
      }
      apps.set(type, { id: created.id, repo, expect: expectation });
    }
  }, 600_000);

  afterAll(async () => {
    await host?.dispose();
    await mirror?.close();
  });

  const push = async (type: AppType) => {
    const app = apps.get(type) as Deployed;
    const started = performance.now();
    const pushed = await host.push(app.repo, 'runplan', key);
    return { ...pushed, ms: performance.now() - started };
  };

  const checkRequests = async (type: AppType) => {
    const app = apps.get(type) as Deployed;
    for (const request of app.expect.requests ?? []) {
      const answer = await host.get(app.id, request.path, { headers: { ...request.headers } });
      expect(answer.status, `${type} GET ${request.path}: ${answer.body}`).toBe(request.status);
      if (request.json) expect(answer.json(), `${type} GET ${request.path}`).toMatchObject(request.json);
      for (const [field, pattern] of Object.entries(request.match ?? {})) expect(String(answer.json()[field]), `${type} GET ${request.path} field ${field}`).toMatch(new RegExp(pattern));
    }
  };

  for (const type of Object.keys(FIXTURES) as AppType[]) {
    it(`deploys a git push of a ${type} application (fixtures/${type}/${FIXTURES[type]}) and serves its answers over HTTPS`, async () => {
      const pushed = await push(type);
      expect(pushed.code, pushed.output).toBe(0);
      expect(pushed.output).toContain(`remote: ==> release 1 serves https://${appHostOf(apps.get(type)?.id ?? '')}:${host.ports.https}/`);
      await checkRequests(type);
      // Play 1.x is the type whose default health check is a GET (of /): the push's plan summary names the path.
      if (type === 'play1') expect(pushed.output).toMatch(/remote: {3}health check: GET \/ \(/);
      if (type === 'node') {
        // The application's layer cache started empty: nothing could be reused.
        expect(pushed.output).not.toContain(REUSED);
        measured('cold push of fixtures/node/express (git push to exit, empty layer cache)', seconds(pushed.ms));
      } else measured(`first push of fixtures/${type}/${FIXTURES[type]}`, seconds(pushed.ms));
      measured(`RSS of serve (node) after the ${type} push`, `${(await rssMiB(host.servePid as number)).toFixed(1)} MiB`);
    });
  }

  it('deploys a one-line change of the Express app with the cached node_modules layer, with 0 failed requests while it switches', async () => {
    const app = apps.get('node') as Deployed;
    const server = join(app.repo, 'server.js');
    await host.writeFile(app.repo, 'server.js', `${await readFile(server, 'utf8')}// a one-line change\n`);
    await host.commit(app.repo, 'one-line change');
    const asking = host.keepAsking(app.id);
    const pushed = await push('node');
    const { sent, failed } = await asking.stop();
    expect(pushed.code, pushed.output).toBe(0);
    expect(pushed.output).toContain(`remote: ${REUSED}`);
    expect(pushed.output).toContain('remote: ==> release 2 serves');
    measured('warm push of a one-line change of fixtures/node/express (node_modules layer reused)', seconds(pushed.ms));
    measured('requests during the warm push', `${sent} sent, ${failed.length} failed`);
    expect(failed).toEqual([]);
    await checkRequests('node');
  });

  it('measures the resident memory of serve, Caddy and sshd while the three applications are served', async () => {
    for (const type of Object.keys(FIXTURES) as AppType[]) expect((await host.get((apps.get(type) as Deployed).id, '/')).status).toBe(200);
    const serve = host.servePid as number;
    const caddy = await pidIn(join(host.data, 'edge', 'caddy.pid'));
    const sshd = await pidIn(join(host.data, 'ssh', 'sshd.pid'));
    measured('RSS of serve (node, serving 3 apps)', `${(await rssMiB(serve)).toFixed(1)} MiB`);
    measured('RSS of Caddy (edge)', `${(await rssMiB(caddy)).toFixed(1)} MiB`);
    measured('RSS of sshd (listener)', `${(await rssMiB(sshd)).toFixed(1)} MiB`);
  });
});
