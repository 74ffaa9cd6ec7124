import { createHash } from 'node:crypto';
import { lstat, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import type { StackBindings } from '../buildpack/contract.js';
import type { Bindings } from '../plan/placeholders.js';
import { runProgram } from './run-program.js';

/**
 * The local executor's ${RUN_DIR} for a built application: short (unix socket
 * paths are limited to 107 bytes, build directories are long) and derived from
 * the build's directory, so that files written during the build (an nginx
 * configuration naming Puma's socket) already hold the value the processes get.
 * The runner makes it when the processes start and removes it once they stop.
 *
 * It lies in a directory of runplan's own user (`runplan-run-<uid>`, see
 * ensureRunDirParent), never directly in the shared temporary directory, where
 * another user could create the predictable name first and sit between nginx
 * and Puma.
 */
export function localRunDir(appDir: string): string {
  return join(tmpdir(), `runplan-run-${process.getuid?.() ?? 'u'}`, createHash('sha256').update(appDir).digest('hex').slice(0, 16));
}

/**
 * Makes the parent of run directories, or checks the one there: a real
 * directory of this user that nobody else can write. As root it is 0711, so that
 * the unprivileged user can reach its own run directory (0700, its own) inside
 * without listing the others.
 */
export async function ensureRunDirParent(runDir: string): Promise<void> {
  const parent = dirname(runDir);
  const uid = process.getuid?.();
  await mkdir(parent, { mode: uid === 0 ? 0o711 : 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const info = await lstat(parent);
  if (!info.isDirectory() || (uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0) {
    throw CoreErrors.HOST_INVALID_SETTING.create({
      message: `${parent}, where runplan keeps the run directories (unix sockets) of its applications, is not a directory of runplan's own user that only it can write; remove it (or set TMPDIR elsewhere) and start again.`,
    });
  }
}

/**
 * What the local builder and runner fill the plan's placeholders with: the
 * build's directories, and the directories of this host's programs the plan
 * names (`stack`, from hostStackBindings). Plans put
 * them into configuration files (nginx's, quoted) and commands, so a directory
 * whose name would need escaping there is refused rather than written.
 */
export function localBindings(appDir: string, stack: StackBindings = {}): Bindings {
  if (/["$\\`]/.test(appDir) || /[\x00-\x1f\x7f]/.test(appDir)) {
    throw CoreErrors.HOST_INVALID_SETTING.create({
      message: `the build directory ${JSON.stringify(appDir)} contains '"', '$', '\\', '\`' or a control character, which plans cannot carry into configuration files; choose a work directory (--work-dir, RUNPLAN_WORK_DIR) without them.`,
    });
  }
  return { ...stack, APP_HOME: appDir, RUN_DIR: localRunDir(appDir) };
}

/** The room of a confined run's directory: sockets and pid files take kilobytes. */
const CONFINED_RUN_DIR_BYTES = 16 * 1024 * 1024;

/**
 * Mounts a tmpfs of CONFINED_RUN_DIR_BYTES over a confined run's directory,
 * the user's (0700): it lies in the machine's temporary folder, outside the
 * application's own disk, so what the application writes there is bounded
 * too (and counted in its memory, as its private /tmp is).
 */
export async function boundRunDir(runDir: string, user: { readonly uid: number; readonly gid: number }): Promise<void> {
  const options = `size=${CONFINED_RUN_DIR_BYTES},mode=0700,uid=${user.uid},gid=${user.gid},nosuid,nodev`;
  const ran = await runProgram('mount', ['-t', 'tmpfs', '-o', options, 'runplan-run', runDir]);
  if (!ran?.ok) {
    throw CoreErrors.HOST_SANDBOX_UNAVAILABLE.create({
      message: `the run directory ${runDir} could not be given a size: mount -t tmpfs ${ran ? `failed: ${(ran.stderr || ran.stdout).trim()}` : 'is not installed'}.`,
    });
  }
}

/** Unmounts what boundRunDir mounted over `runDir`; nothing when nothing is mounted there. */
export async function unboundRunDir(runDir: string): Promise<void> {
  // umount says "not mounted" (exit 32) when nothing (more) is: a run started twice over one path stacked two at most.
  for (let i = 0; i < 3; i++) if (!(await runProgram('umount', [runDir]))?.ok) return;
}
