import { lstat, readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { CoreErrors } from '../errors/core-errors.js';
import type { AppUser } from './app-user.js';
import { spawnIdentity } from './app-user.js';
import { type ProgramOutcome, type RunningProgram, type StartProgramOptions, startProgram } from './run-program.js';

/**
 * Every change to a tree the application's user can write — the build, its run
 * files, its temporary directories — is made by a short program running with
 * that user's uid and nothing more (docs/security.md, "Privilege model"). The
 * kernel then decides what the change may reach: a folder the application
 * swapped for a link to a host folder, while its code ran or its previous
 * release still runs, leads the program only where the application's own code
 * could write anyway. Root never opens, links, changes the mode or owner of, or
 * removes a path below such a tree; what crosses between root's trees (the
 * source, the layer cache) and the application's is a tar stream.
 *
 * The programs are the system's own (sh, tar, rm, ln, mkdir, cat, head), found
 * on the fixed PATH below, with the paths as arguments, never in the script.
 */
export interface UserFileOptions {
  /** Stops the program (a huge tree, a FIFO where a file was expected); default 30 minutes for trees, 60 s for single files. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** One change of a batch (UserFiles.apply), in order. */
export type UserFileChange =
  | { readonly kind: 'remove'; readonly path: string }
  | { readonly kind: 'mkdir'; readonly path: string; readonly mode?: number }
  | { readonly kind: 'symlink'; readonly target: string; readonly path: string };

const SYSTEM_PATH = '/usr/bin:/bin';
const TREE_TIMEOUT_MS = 30 * 60_000;
const FILE_TIMEOUT_MS = 60_000;
const STDERR_KEPT = 2_000;

// Removes everything below $1 and $1 itself, whatever modes the application left (a 0555
// directory of its own cannot be emptied until it is writable again).
const REMOVE = 'chmod -R u+w -- "$1" 2>/dev/null; rm -rf -- "$1"';
const REMOVE_SECOND = 'chmod -R u+w -- "$2" 2>/dev/null; rm -rf -- "$2"';

/**
 * A tar stream of a tree of runplan's own (the source it was given, a sealed
 * cache entry), read by runplan itself: the other end of UserFiles.unpack.
 */
export function packOwnTree(dir: string, exclude: readonly string[] = []): { readonly stream: Readable; readonly done: Promise<void> } {
  const packing = startProgram('tar', ['-c', '-f', '-', '-C', dir, ...exclude.map((name) => `--exclude=${name}`), '.'], {
    cwd: '/',
    env: { PATH: SYSTEM_PATH, LC_ALL: 'C' },
    timeoutMs: 0,
    stdoutStream: true,
    keepLast: true,
    maxBufferBytes: STDERR_KEPT,
  });
  // Sockets are skipped with a notice and exit 0; anything else unreadable fails.
  const done = packing.done.then((ran) => {
    if (ran.ok) return;
    const status = ran.startError ?? (ran.exitCode === null ? `signal ${ran.signal}` : `exit status ${ran.exitCode}`);
    throw new Error(`archiving ${dir} failed: ${ran.stderr.trim().split('\n').pop() || status}`);
  });
  return { stream: packing.stdout, done };
}

export class UserFiles {
  constructor(readonly user: AppUser) {}

  /** Fills `dir` (made if missing, as the user) from a tar stream that root produces. With `keepExisting`, files already there win. */
  async unpack(dir: string, archive: Readable, options: UserFileOptions & { readonly keepExisting?: boolean } = {}): Promise<void> {
    await this.run('unpacking into', `mkdir -p -- "$1" && exec tar -x -f - -p --no-same-owner ${options.keepExisting ? '--skip-old-files ' : ''}-C "$1"`, [dir], { ...options, stdin: archive });
  }

  /**
   * Moves the tree `from` (the user's, in a directory the user may rename out of)
   * to `to`, replacing what is there: a rename when both are on one file system.
   */
  async moveIn(from: string, to: string, options: UserFileOptions = {}): Promise<void> {
    await this.run('moving into', `${REMOVE_SECOND}; mkdir -p -- "$(dirname -- "$2")" && exec mv -f -T -- "$1" "$2"`, [from, to], options);
  }

  /** A tar stream of `dir`'s contents, read as the user (links are archived as links, never followed). */
  pack(dir: string, options: UserFileOptions = {}): { readonly stream: Readable; readonly done: Promise<void> } {
    const packing = this.start('cd -- "$1" && exec tar -c -f - --format=posix .', [dir], { ...options, stdoutStream: true });
    return { stream: packing.stdout, done: packing.done.then((ran) => this.finished(ran, 'packing', dir, options)) };
  }

  /** Writes a file atomically with its mode (parents made as needed): readers see the old content or the new. */
  async write(path: string, content: string | Uint8Array, mode: number, options: UserFileOptions = {}): Promise<void> {
    // Created 0600 under umask 077, then given its mode: a secret is never readable by others, not even for an instant.
    const script = 'umask 077; mkdir -p -- "$(dirname -- "$1")" && t=$(mktemp -- "$1.runplan-XXXXXX") && { cat > "$t" && chmod "$2" -- "$t" && mv -f -T -- "$t" "$1"; } || { rm -f -- "$t"; exit 1; }';
    await this.run('writing', script, [path, mode.toString(8)], { timeoutMs: FILE_TIMEOUT_MS, ...options, stdin: content });
  }

  /** At most `maxBytes` of a regular file, or undefined when there is none. */
  async read(path: string, maxBytes: number, options: UserFileOptions = {}): Promise<string | undefined> {
    let missing = false;
    const ran = await this.run('reading', 'test -f "$1" || exit 3; exec head -c "$2" -- "$1"', [path, String(maxBytes)], {
      timeoutMs: FILE_TIMEOUT_MS,
      ...options,
      keepStdout: maxBytes,
      allow: (code) => {
        missing = code === 3;
        return missing;
      },
    });
    return missing ? undefined : ran.stdout;
  }

  /** Whether `path` leads to a directory the user can enter (links followed, as the user). */
  async isDirectory(path: string, options: UserFileOptions = {}): Promise<boolean> {
    let no = false;
    await this.run('looking at', 'test -d "$1" && test -x "$1" || exit 3', [path], {
      timeoutMs: FILE_TIMEOUT_MS,
      ...options,
      allow: (code) => {
        no = code === 3;
        return no;
      },
    });
    return !no;
  }

  /** Removes `path` and everything below it. */
  async remove(path: string, options: UserFileOptions = {}): Promise<void> {
    await this.run('removing', REMOVE, [path], options);
  }

  /**
   * Removes everything inside `dir`, which stays: the caller, owning the parent,
   * removes the empty directory itself (its name cannot be swapped by the user).
   */
  async empty(dir: string, options: UserFileOptions = {}): Promise<void> {
    await this.run('emptying', 'cd -- "$1" 2>/dev/null || exit 0; chmod -R u+w . 2>/dev/null; exec find . -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +', [dir], options);
  }

  /** Carries out `changes` in order, in one program; the first that fails stops the rest. */
  async apply(changes: readonly UserFileChange[], options: UserFileOptions = {}): Promise<void> {
    if (changes.length === 0) return;
    const lines: string[] = ['set -e'];
    const args: string[] = [];
    const arg = (value: string) => {
      args.push(value);
      return `"\${${args.length}}"`;
    };
    for (const change of changes) {
      if (change.kind === 'remove') {
        const p = arg(change.path);
        lines.push(`chmod -R u+w -- ${p} 2>/dev/null || true`, `rm -rf -- ${p}`);
      } else if (change.kind === 'mkdir') {
        lines.push(`mkdir -p ${change.mode === undefined ? '' : `-m ${change.mode.toString(8)} `}-- ${arg(change.path)}`);
      } else {
        // -T: a directory in the way is an error, never a link made inside it.
        lines.push(`ln -s -f -n -T -- ${arg(change.target)} ${arg(change.path)}`);
      }
    }
    await this.run('changing', lines.join('\n'), args, { timeoutMs: FILE_TIMEOUT_MS, ...options });
  }

  /** /bin/sh running `script` as the user; SIGKILL when it runs out of time or is interrupted (a tree of the user's owes runplan no grace). */
  private start(
    script: string,
    args: readonly string[],
    options: UserFileOptions & { readonly stdin?: StartProgramOptions['input']; readonly stdoutStream?: boolean; readonly keepStdout?: number },
  ): RunningProgram {
    return startProgram('/bin/sh', ['-c', script, 'sh', ...args], {
      ...spawnIdentity(this.user),
      // '/': a relative path of the application never resolves against a folder root chose.
      cwd: '/',
      env: { PATH: SYSTEM_PATH, LC_ALL: 'C' },
      timeoutMs: options.timeoutMs ?? TREE_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.stdin === undefined ? {} : { input: options.stdin }),
      ...(options.stdoutStream ? { stdoutStream: true } : {}),
      // The end of what it said on stderr is why it failed; stdout is kept whole (head -c bounds it).
      keepLast: true,
      maxBufferBytes: Math.max(STDERR_KEPT, options.keepStdout ?? 0),
    });
  }

  private async run(
    what: string,
    script: string,
    args: readonly string[],
    options: UserFileOptions & { readonly stdin?: StartProgramOptions['input']; readonly keepStdout?: number; readonly allow?: (code: number) => boolean },
  ): Promise<ProgramOutcome> {
    const ran = await this.start(script, args, options).done;
    this.finished(ran, what, args[0] ?? '', options);
    return ran;
  }

  private finished(ran: ProgramOutcome, what: string, path: string, options: UserFileOptions & { readonly allow?: (code: number) => boolean }): void {
    const { exitCode: code, signal } = ran;
    if (ran.startError !== undefined) throw new Error(`${what} ${path} as ${this.user.name} failed: /bin/sh cannot be started (${ran.startError})`);
    if ((ran.ok || (code !== null && options.allow?.(code))) && ran.inputError === undefined) return;
    const how = ran.timeout ? 'did not finish in time' : ran.inputError ? `lost its input (${ran.inputError.message})` : code !== null ? `exit status ${code}` : `signal ${signal}`;
    const said = ran.stderr.slice(-STDERR_KEPT).trim().split('\n').slice(-3).join('; ');
    throw CoreErrors.BUILD_TREE_CHANGED.create({
      message: `${what} ${path} as ${this.user.name} failed: ${how}${said ? `: ${said}` : ''}.`,
      details: { path, exitCode: code, signal },
    });
  }
}

/**
 * Removes a directory of the user's that lies in a directory of root's: the
 * user empties it (whatever it holds, links included, the user's rights
 * decide), then root removes the empty directory, whose name the user cannot
 * swap. A directory still runplan's own (made, but never handed over: a build
 * killed in between) is walked by runplan, which the user cannot change under
 * it; what of it is the user's is emptied by the user in the same way.
 */
export async function removeUserDirectory(dir: string, files: UserFiles): Promise<void> {
  const info = await lstat(dir).catch(() => undefined);
  if (info === undefined) return;
  if (!info.isDirectory()) {
    // unlink(2): a link goes, never what it points to.
    await rm(dir, { force: true });
    return;
  }
  if (info.uid !== files.user.uid && info.uid === process.getuid?.() && (info.mode & 0o022) === 0) {
    for (const name of await readdir(dir)) await removeUserDirectory(join(dir, name), files);
  } else {
    await files.empty(dir);
  }
  await rmdir(dir);
}
