import { cp, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adoptRun, discardRun } from '../../src/supervision/adopt-run.js';
import { type Deployment, deployApp } from '../../src/engines/local/local-executor.js';
import { defaultRegistry } from '../../src/compose/default-registry.js';
import { Logger, type LogLine } from '../../src/log/logger.js';
import { machineCgroups } from '../../src/sandbox/cgroups.js';
import { identifyProcess, isRunning } from '../../src/process/process-identity.js';
import { AppSandbox } from '../../src/sandbox/sandbox.js';
import { SupervisionTree } from '../../src/supervision/supervision-tree.js';
import { makeTestUser, type TestUser } from '../helpers/app-users.js';
import { ROOT } from '../helpers/cli.js';
import { get } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { tempDir } from '../helpers/temp.js';

const asRoot = process.getuid?.() === 0;

/**
 * A lasting run (src/supervision/): the processes kept by s6 in a supervision
 * tree, not as runplan's children. The program that started them lets go (as a
 * host's serve exits), the application keeps answering, another program takes
 * it over (the same process, the log followed from where the first stopped),
 * s6 restarts a crash by the plan's policy, and the run's stop removes all of it.
 */
describe.runIf(asRoot)('a run that outlives the program that started it', () => {
  let user: TestUser;
  let tree: SupervisionTree;
  const cgroupRoot = `runplan-test-lasting-${process.pid}`;

  beforeAll(async () => {
    user = await makeTestUser();
    tree = new SupervisionTree(join(await tempDir('runplan-tree-'), 'tree'));
    expect(await tree.open()).toEqual({ adopted: false, staleRuns: [] });
  });
  afterAll(async () => {
    await tree?.close();
    await user?.remove();
    for (const { mount } of Object.values(machineCgroups()?.controllers ?? {})) {
      await rmdir(join(mount, cgroupRoot, 'facts')).catch(() => undefined);
      await rmdir(join(mount, cgroupRoot)).catch(() => undefined);
    }
  });

  /** The facts fixture deployed as a lasting run `runId` of `tree`, in its walls. */
  async function deployFacts(on: SupervisionTree, runId: string, lines: string[]): Promise<{ deployment: Deployment; port: number; sandbox: AppSandbox }> {
    const appDir = join(await tempDir('runplan-lasting-'), 'app');
    await cp(join(ROOT, 'fixtures', 'host', 'facts'), appDir, { recursive: true });
    const sandbox = new AppSandbox({ user, cgroup: [cgroupRoot, 'facts'], readable: [inject('sharedCacheDir')] });
    const port = await freePort();
    try {
      const deployment = await deployApp({
        registry: defaultRegistry(),
        appDir,
        type: 'node',
        env: { application: { CC_HEALTH_CHECK_PATH: '/health' } },
        host: { port, workDir: await tempDir('runplan-work-'), cacheDir: inject('sharedCacheDir'), instance: { cpus: 1, memoryMb: 256 }, stabilityWindowMs: 0 },
        sink: (line) => lines.push(line.text),
        sandbox,
        lasting: { tree: on, runId },
      });
      return { deployment, port, sandbox };
    } catch (error) {
      console.log(lines.slice(-40).join('\n'));
      throw error;
    }
  }

  const facts = async (port: number) => JSON.parse((await get(`http://127.0.0.1:${port}/`)).body) as { pid: number; startedAt: number; uid: number };

  it('keeps answering once its starter let go, is taken over as it is, restarted by s6 after a crash, and stopped whole', async () => {
    const lines: string[] = [];
    const sink = (line: LogLine) => lines.push(line.text);
    const appDir = join(await tempDir('runplan-lasting-'), 'app');
    await cp(join(ROOT, 'fixtures', 'host', 'facts'), appDir, { recursive: true });
    const sandbox = new AppSandbox({ user, cgroup: [cgroupRoot, 'facts'], readable: [inject('sharedCacheDir')] });
    const port = await freePort();
    let deployment: Deployment;
    try {
      deployment = await deployApp({
        registry: defaultRegistry(),
        appDir,
        type: 'node',
        env: { application: { CC_HEALTH_CHECK_PATH: '/health' } },
        host: { port, workDir: await tempDir('runplan-work-'), cacheDir: inject('sharedCacheDir'), instance: { cpus: 1, memoryMb: 256 }, stabilityWindowMs: 0 },
        sink,
        sandbox,
        lasting: { tree, runId: 'facts.r1' },
      });
    } catch (error) {
      console.log(lines.slice(-40).join('\n'));
      throw error;
    }
    const first = await facts(port);
    expect(first.uid).toBe(user.uid);
    // The starter lets go: nothing of the run is its child, so the run goes on.
    await deployment.running.detach?.();
    expect((await facts(port)).startedAt).toBe(first.startedAt);

    // Another program takes it over: nothing started, the same process answers.
    const adoptedLines: LogLine[] = [];
    const logger = new Logger((line) => adoptedLines.push(line));
    const adopted = await adoptRun({ tree, runId: 'facts.r1', logger, sandbox });
    if ('problem' in adopted) throw new Error(adopted.problem);
    expect((await facts(port)).startedAt).toBe(first.startedAt);
    expect(adopted.running.processes()).toEqual([expect.objectContaining({ name: 'web', running: true, restarts: 0 })]);

    // A crash: s6 starts it again by the plan's policy, and the exit is told from the log `finish` wrote.
    const exits: number[] = [];
    adopted.running.onExit?.((exit) => exits.push(exit.code ?? -1));
    await get(`http://127.0.0.1:${port}/exit?code=3`);
    let again: { startedAt: number } | undefined;
    for (let i = 0; i < 100 && again === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = await facts(port).catch(() => undefined);
    }
    expect(again?.startedAt).toBeGreaterThan(first.startedAt);
    expect(exits).toEqual([3]);
    expect(adoptedLines.map((l) => l.text)).toContainEqual(expect.stringMatching(/^web exited with code 3 after .*; restarting in 1 s \(restart 1\)$/));
    // The process's own lines reach the new follower, with the new start's.
    expect(adoptedLines.filter((l) => l.origin.kind === 'process').map((l) => l.text)).toContainEqual(expect.stringContaining('host-facts listening'));

    await adopted.running.stop();
    await expect(facts(port)).rejects.toThrow();
    expect(await tree.runs()).toEqual([]);
    const memory = machineCgroups()?.controllers.memory.mount as string;
    const left = await readdir(join(memory, cgroupRoot, 'facts'), { withFileTypes: true });
    expect(left.filter((e) => e.isDirectory()).map((e) => e.name)).toEqual([]);
  }, 120_000);

  it('is found again by the next program: the tree it left is taken over', async () => {
    const again = new SupervisionTree(tree.dir);
    expect(await again.open()).toEqual({ adopted: true, staleRuns: [] });
  });

  it('takes over no run of another format: it says which runplan made it, and the run can be discarded', async () => {
    const { deployment, port } = await deployFacts(tree, 'facts.r2', []);
    await deployment.running.detach?.();
    const file = join(tree.runDir('facts.r2'), 'run.json');
    await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), format: 0, runplanVersion: '0.0.9' }));
    const taken = await adoptRun({ tree, runId: 'facts.r2', logger: new Logger(() => undefined) });
    expect(taken).toMatchObject({ problem: expect.stringMatching(/^it was started by runplan 0\.0\.9 with run format 0, and this runplan \(.*\) takes over format 1 only$/) });
    await discardRun(tree, 'facts.r2', new Logger(() => undefined));
    await expect(facts(port)).rejects.toThrow();
    expect(await tree.runs()).toEqual([]);
  }, 120_000);

  it('recognises a tree nobody supervises any more (the machine restarted, s6-svscan killed): its runs are stopped and named stale', async () => {
    const own = new SupervisionTree(join(await tempDir('runplan-tree-'), 'tree'));
    await own.open();
    const { deployment, port } = await deployFacts(own, 'facts.r3', []);
    await deployment.running.detach?.();
    const { pid } = JSON.parse(await readFile(join(own.dir, 'svscan.json'), 'utf8')) as { pid: number };
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && isRunning(identifyProcess(pid) ?? { pid, startTime: '', bootId: '' }); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const again = new SupervisionTree(own.dir);
    expect(await again.open()).toEqual({ adopted: false, staleRuns: ['facts.r3'] });
    // Its supervisor was told to stop the process and exit: nothing of the stale run answers.
    let answered = true;
    for (let i = 0; i < 50 && answered; i++) {
      answered = await facts(port).then(
        () => true,
        () => false,
      );
      if (answered) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answered).toBe(false);
    await discardRun(again, 'facts.r3', new Logger(() => undefined));
    await again.close();
    // The run's walls are the host's to remove (their names are in its record): the cgroup goes once empty.
    await AppSandbox.removeCgroups([cgroupRoot, 'facts']).catch(() => undefined);
  }, 120_000);
});
