import { existsSync } from 'node:fs';
import { readdir, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { RunningApp } from '../executor/contract.js';
import type { Logger } from '../log/logger.js';
import type { LoweredProcess } from '../lowering/lower.js';
import { DEFAULT_RESTART, DEFAULT_STOP_GRACE_MS } from '../plan/restart-policy.js';
import { useBuild } from '../process/builds-in-use.js';
import { removeUserDirectory, UserFiles } from '../process/user-files.js';
import { unboundRunDir } from '../process/run-dir.js';
import type { AppSandbox, SandboxScope } from '../sandbox/sandbox.js';
import { LastingProcess } from './lasting-process.js';
import { readRunRecord, type RunRecord } from './run-record.js';
import type { SupervisionTree } from './supervision-tree.js';
import { releaseRun } from './run-resources.js';

/** What adoptRun is given: the tree and the run's id, where its lines go from now on, and its walls. */
export interface AdoptRunOptions {
  readonly tree: SupervisionTree;
  readonly runId: string;
  /** Receives every line the run writes from now on, and those it wrote while nobody followed it. */
  readonly logger: Logger;
  /** The application's walls, as the run was started in: its cgroup is found again by name, never made anew. */
  readonly sandbox?: AppSandbox;
}

/** A run taken over: its processes as a RunningApp (stop(), onExit, processes()), and its record. */
export interface AdoptedRun {
  readonly running: RunningApp;
  readonly record: RunRecord;
}

/**
 * Takes over a lasting run an earlier program started (a host's serve that
 * crashed, stopped or was upgraded): its record read, every process found
 * under s6 (its supervisor alive, the process up or being restarted by its
 * policy), its walls and build held again, its log followed from where the
 * last reader stopped. Nothing is started. A run that cannot be taken over as
 * it is — no record, another format, a process s6 no longer keeps, its cgroup
 * gone — is told as a `problem`, and left for the caller to stop and start
 * again.
 */
export async function adoptRun(options: AdoptRunOptions): Promise<AdoptedRun | { readonly problem: string }> {
  const { tree, runId, logger, sandbox } = options;
  const record = await readRunRecord(tree.runDir(runId));
  if ('problem' in record) return record;
  let scope: SandboxScope | undefined;
  if (record.scope !== undefined) {
    if (sandbox === undefined) return { problem: 'it ran in walls and none were given to take it over in' };
    scope = await sandbox.reopen(record.scope);
    if (scope === undefined) return { problem: `its cgroup (${record.scope.name}) is gone` };
  }
  const user = { ...record.user };
  const processes = record.processes.map(
    (p) =>
      new LastingProcess(adoptedSpec(p), undefined, logger, {
        tree,
        runId,
        marker: record.marker,
        tempDir: record.runDir,
        user,
        ...(scope ? { scope } : {}),
      }),
  );
  for (const process of processes) {
    if (!(await process.supervised())) return { problem: `s6 no longer keeps its process ${process.spec.name}` };
  }
  await Promise.all(processes.map((p) => p.attach()));
  const unuse = useBuild(record.appDir);
  const release = () => releaseRun({ appDir: record.appDir, runDir: record.runDir, secretRunFiles: record.secretRunFiles, files: new UserFiles(user), scope, unuse, lasting: { tree, runId } });
  let stopping: Promise<void> | undefined;
  const running: RunningApp = {
    processes: () => processes.map((p) => p.state()),
    onExit: (listener) => {
      const stops = processes.map((p) => p.onExit(listener));
      return () => {
        for (const stop of stops) stop();
      };
    },
    refresh: async () => {
      await Promise.all(processes.map((p) => p.refresh()));
    },
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all(processes.map((p) => p.stop()));
        await release();
      })()),
    detach: async () => {
      await Promise.all(processes.map((p) => p.detach()));
      unuse();
    },
  };
  return { running, record };
}

/** A process as its record keeps it: what following and stopping it need (it is never started from this). */
function adoptedSpec(p: RunRecord['processes'][number]): LoweredProcess {
  return { name: p.name, role: p.role, cwd: p.cwd, restart: p.restart, stopGraceMs: p.stopGraceMs, command: { kind: 'exec', argv: [] }, env: {}, pathPrepend: [], port: null };
}

/**
 * Stops what is left of a run nobody can take over (a stale record, another
 * format): each of its services leaves the tree (those the record names, or, when
 * it cannot be read, every service folder of the run), its run directory goes
 * (as its user), then its folder in the tree. Its walls, if any, are the
 * caller's to remove (they are named in the record).
 */
export async function discardRun(tree: SupervisionTree, runId: string, logger: Logger): Promise<RunRecord | undefined> {
  const record = await readRunRecord(tree.runDir(runId));
  const processes = 'problem' in record ? await serviceFolders(tree.runDir(runId)) : record.processes;
  for (const p of processes) {
    const process = new LastingProcess(adoptedSpec(p), undefined, logger, { tree, runId, marker: 'problem' in record ? '' : record.marker });
    if (await process.supervised()) await process.stop();
  }
  const left = 'problem' in record ? record.leftovers : record;
  if (left !== undefined) {
    await unboundRunDir(left.runDir);
    await removeUserDirectory(left.runDir, new UserFiles({ ...left.user })).catch(() => undefined);
    // The shared parent goes with the last run (another one starting now makes it again).
    await rmdir(dirname(left.runDir)).catch(() => undefined);
  }
  await tree.forgetRun(runId);
  return 'problem' in record ? undefined : record;
}

/** The service folders of a run whose record cannot be read, as processes with the default policy and grace. */
async function serviceFolders(dir: string): Promise<RunRecord['processes']> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const names = entries.filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'run'))).map((e) => e.name);
  return names.map((name) => ({ name, role: 'worker', cwd: '/', restart: DEFAULT_RESTART, stopGraceMs: DEFAULT_STOP_GRACE_MS }));
}
