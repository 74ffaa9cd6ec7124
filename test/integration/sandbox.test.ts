import { cp, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { type Deployment, deployApp } from '../../src/engines/local/local-executor.js';
import { defaultRegistry } from '../../src/compose/default-registry.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { CoreWarnings } from '../../src/errors/core-warnings.js';
import type { LogLine } from '../../src/log/logger.js';
import { AppSandbox } from '../../src/sandbox/sandbox.js';
import { machineCgroups } from '../../src/sandbox/cgroups.js';
import { makeTestUser, type TestUser } from '../helpers/app-users.js';
import { get } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { tempDir } from '../helpers/temp.js';
import { ROOT } from '../helpers/cli.js';

const asRoot = process.getuid?.() === 0;

/**
 * An application in its walls (src/sandbox/): its own user, its own /proc, a view
 * of the machine where only its folders are writable and the host's private
 * trees are empty, and cgroups that hold it to its instance. The fixture
 * (fixtures/host/tenant-probe) tries each wall for real and reports over HTTP.
 */
describe.runIf(asRoot)('an application in its sandbox', () => {
  let user: TestUser;
  let secretDir: string;
  const cgroupRoot = `runplan-test-${process.pid}`;
  const lines: string[] = [];
  const sink = (line: LogLine) => lines.push(line.text);

  beforeAll(async () => {
    user = await makeTestUser();
    // A folder of the host's (a data folder): root's, but readable by all, as settings.json was.
    secretDir = await tempDir('runplan-host-secret-');
    await writeFile(join(secretDir, 'settings.json'), '{"secret": "host"}\n', { mode: 0o644 });
  });
  afterAll(async () => {
    await user?.remove();
    // What a host keeps between releases (the application's cgroup folders), the test removes.
    for (const { mount } of Object.values(machineCgroups()?.controllers ?? {})) {
      await rmdir(join(mount, cgroupRoot, 'probe')).catch(() => undefined);
      await rmdir(join(mount, cgroupRoot)).catch(() => undefined);
    }
  });

  const getJson = async (url: string) => {
    const answer = await get(url);
    return { status: answer.status, json: JSON.parse(answer.body) as unknown };
  };

  async function deployProbe(env: Record<string, string>, memoryMb = 256): Promise<Deployment> {
    const appDir = join(await tempDir('runplan-probe-'), 'app');
    await cp(join(ROOT, 'fixtures', 'host', 'tenant-probe'), appDir, { recursive: true });
    const sandbox = new AppSandbox({ user, cgroup: [cgroupRoot, 'probe'], hidden: [secretDir], readable: [inject('sharedCacheDir')] });
    return deployApp({
      registry: defaultRegistry(),
      appDir,
      type: 'node',
      env: { application: { CC_HEALTH_CHECK_PATH: '/health', ...env } },
      host: { port: await freePort(), workDir: await tempDir('runplan-work-'), cacheDir: inject('sharedCacheDir'), instance: { cpus: 1, memoryMb }, stabilityWindowMs: 0 },
      sink,
      sandbox,
    }).catch((e) => {
      console.log(lines.slice(-40).join('\n'));
      throw e;
    });
  }

  it('runs the build and the processes as its own user, seeing only its processes, its folders and none of the host', async () => {
    process.env.RUNPLAN_TEST_MARKER_TOKEN = 'operator-secret';
    const deployment = await deployProbe({
      CC_POST_BUILD_HOOK: 'node probe.js',
      PROBE_TARGETS: JSON.stringify([
        { op: 'read', path: join(secretDir, 'settings.json') },
        { op: 'list', path: '/root' },
        { op: 'write', path: '/usr/local/probe' },
        { op: 'signal', pid: String(process.pid) },
      ]),
    });
    delete process.env.RUNPLAN_TEST_MARKER_TOKEN;
    try {
      const base = `http://127.0.0.1:${deployment.plan.healthCheck.port}`;
      const facts = (await getJson(`${base}/facts`)).json as Record<string, unknown>;
      expect(facts).toMatchObject({ uid: user.uid, gid: user.gid, groups: [user.gid], tmpWritable: true });
      // Its own PID namespace: bwrap's reaper, the shell npm start runs, node — not the machine's hundreds.
      expect(facts.visiblePids as number).toBeLessThan(10);
      expect(facts.capabilities).toEqual(expect.arrayContaining(['CapEff:\t0000000000000000', 'CapBnd:\t0000000000000000', 'NoNewPrivs:\t1']));
      expect(facts.envNames).not.toContain('RUNPLAN_TEST_MARKER_TOKEN');
      const build = (await getJson(`${base}/build-probe`)).json as { facts: { uid: number }; results: { op: string; result: { ok: boolean; code?: string } }[] };
      expect(build.facts.uid).toBe(user.uid);
      expect(build.results.map((r) => [r.op, r.result.ok])).toEqual([
        ['read', false],
        ['list', true],
        ['write', false],
        ['signal', false],
      ]);
      // /root is an empty folder in its view.
      expect(build.results[1]?.result).toEqual({ ok: true, value: [] });
      const tryOne = async (query: string) => (await getJson(`${base}/try?${query}`)).json as { ok: boolean; code?: string };
      expect(await tryOne(`op=read&path=${encodeURIComponent(join(secretDir, 'settings.json'))}`)).toMatchObject({ ok: false, code: 'ENOENT' });
      expect(await tryOne('op=write&path=/etc/probe')).toMatchObject({ ok: false, code: 'EROFS' });
      expect(await tryOne(`op=environ&pid=${process.pid}`)).toMatchObject({ ok: false, code: 'ENOENT' });
    } finally {
      await deployment.stop();
    }
    // Its cgroups go with it.
    const layout = machineCgroups();
    const memory = layout?.controllers.memory.mount as string;
    const left = await readdir(join(memory, cgroupRoot, 'probe'), { withFileTypes: true });
    expect(left.filter((e) => e.isDirectory()).map((e) => e.name)).toEqual([]);
  });

  it('holds the application to its instance: a process that takes more memory is killed, said with a coded line, and restarted', async () => {
    lines.length = 0;
    const deployment = await deployProbe({}, 128);
    try {
      const base = `http://127.0.0.1:${deployment.plan.healthCheck.port}`;
      const before = (await getJson(`${base}/facts`)).json as { pid: number };
      await getJson(`${base}/hog-self`);
      await expect.poll(() => lines.find((l) => l.includes(CoreWarnings.RUN_MEMORY_LIMIT.code)), { timeout: 30_000 }).toBeDefined();
      expect(lines.find((l) => l.includes(CoreWarnings.RUN_MEMORY_LIMIT.code))).toContain('web was killed: the application used more than its 128 MiB of memory');
      // Restarted by its policy: it answers again, from a new process.
      await expect.poll(async () => ((await getJson(`${base}/facts`).catch(() => ({ json: {} }))).json as { pid?: number }).pid, { timeout: 30_000 }).not.toBe(before.pid);
    } finally {
      await deployment.stop();
    }
  });

  it("refuses a fork loop past the instance's processes, and the application goes on answering", async () => {
    const deployment = await deployProbe({}, 1024);
    try {
      const base = `http://127.0.0.1:${deployment.plan.healthCheck.port}`;
      await getJson(`${base}/hog?kind=fork&amount=5000`);
      const pids = join(machineCgroups()?.controllers.pids.mount as string, cgroupRoot, 'probe');
      const scope = (await readdir(pids, { withFileTypes: true })).find((e) => e.isDirectory())?.name as string;
      await expect.poll(async () => Number(/max (\d+)/.exec(await readFile(join(pids, scope, 'pids.events'), 'utf8'))?.[1]), { timeout: 30_000 }).toBeGreaterThan(0);
      expect((await getJson(`${base}/facts`)).status).toBe(200);
      expect((await readFile(join(pids, scope, 'cgroup.procs'), 'utf8')).split('\n').length).toBeLessThanOrEqual(1025);
    } finally {
      await deployment.stop();
    }
  });

  it('says which limit ended a process that gives up when a fork is refused', async () => {
    lines.length = 0;
    const deployment = await deployProbe({}, 1024);
    try {
      await getJson(`http://127.0.0.1:${deployment.plan.healthCheck.port}/fork-self`);
      await expect.poll(() => lines.find((l) => l.includes(CoreWarnings.RUN_PROCESS_LIMIT.code)), { timeout: 60_000 }).toContain("web reached the application's limit of 1024 processes and threads");
    } finally {
      await deployment.stop();
    }
  });

  it('fails a deployment whose web process takes more memory than its instance before it is ready, saying so', async () => {
    await expect(deployProbe({ PROBE_HOG_AT_START: '1' }, 128)).rejects.toMatchObject({
      code: CoreErrors.RUN_MEMORY_LIMIT.code,
      message: expect.stringContaining('the web process was killed: the application used more than its 128 MiB of memory'),
    });
  });

  it("stops a build step that forks past the build instance's processes, with the coded error", async () => {
    await expect(deployProbe({ CC_POST_BUILD_HOOK: 'i=0; while [ $i -lt 3000 ]; do sleep 600 & i=$((i+1)); done; wait' }, 1024)).rejects.toMatchObject({
      code: CoreErrors.BUILD_PROCESS_LIMIT.code,
      message: expect.stringContaining('the build reached its limit of 1024 processes and threads'),
    });
  });

  it('stops a build step that takes more memory than the build instance, with the coded error', async () => {
    await expect(deployProbe({ CC_POST_BUILD_HOOK: `node -e "const a = []; for (;;) a.push(Buffer.alloc(1 << 24, 1))"` }, 128)).rejects.toMatchObject({
      code: CoreErrors.BUILD_MEMORY_LIMIT.code,
      message: expect.stringContaining('the build used more than its 128 MiB of memory'),
    });
  });
});
