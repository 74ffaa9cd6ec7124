import { rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { removeUserDirectory, type UserFiles } from '../process/user-files.js';
import { unboundRunDir } from '../process/run-dir.js';
import type { SandboxScope } from '../sandbox/sandbox.js';
import type { SupervisionTree } from './supervision-tree.js';

/** A run that outlives runplan's process: its processes kept by s6 in `tree`, under the name `runId` (a host's release: app_….r12). */
export interface LastingRun {
  readonly tree: SupervisionTree;
  readonly runId: string;
}

/** What a run held besides its processes, let go once they stopped. */
export interface RunResources {
  readonly appDir: string;
  readonly runDir: string;
  readonly secretRunFiles: readonly string[];
  readonly files: UserFiles;
  readonly scope: SandboxScope | undefined;
  readonly unuse: () => void;
  readonly lasting?: LastingRun;
}

/**
 * Removes the run's secret files (as its user: a folder of the path the application replaced by a
 * link meanwhile leads only where it could write itself), kills whatever of it still runs with its
 * walls (a daemon that left its tree), removes its run directory, and forgets a lasting run's record.
 */
export async function releaseRun(run: RunResources): Promise<void> {
  await Promise.all(run.secretRunFiles.map((path) => run.files.remove(join(run.appDir, path)).catch(() => undefined)));
  await run.scope?.close().catch(() => undefined);
  await unboundRunDir(run.runDir);
  await removeUserDirectory(run.runDir, run.files).catch(() => undefined);
  // The shared parent goes with the last run (another one starting now makes it again).
  await rmdir(dirname(run.runDir)).catch(() => undefined);
  if (run.lasting) await run.lasting.tree.forgetRun(run.lasting.runId).catch(() => undefined);
  run.unuse();
}
