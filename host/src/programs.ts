import { type RunProgramOptions, runProgram, type StartProgramOptions, startProgram } from 'runplan/process';

/** Why a program the host needed failed: its exit status (as Node's execFile says it, for the callers that tell one status from another) and what it printed. */
export class ProgramFailed extends Error {
  constructor(
    message: string,
    readonly code: number | string | null,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/**
 * Runs a program the host needs to succeed (git, useradd, id, pg_isready) through
 * runplan's one runner, with the machine's variables only unless `env` is given:
 * what it printed, or a ProgramFailed.
 */
export async function runChecked(
  file: string,
  args: readonly string[],
  options: RunProgramOptions & Pick<StartProgramOptions, 'uid' | 'gid' | 'input'> = {},
): Promise<{ stdout: string; stderr: string }> {
  const shown = `${file} ${args.join(' ')}`;
  if (options.uid !== undefined || options.gid !== undefined || options.input !== undefined) {
    const outcome = await startProgram(file, args, options).done;
    if (outcome.startError !== undefined) throw new ProgramFailed(`${shown} could not start (${outcome.startError})`, outcome.startError, '', '');
    return settled(shown, outcome);
  }
  const result = await runProgram(file, args, options);
  if (result === undefined) throw new ProgramFailed(`${file} is not installed, or not executable`, 'ENOENT', '', '');
  return settled(shown, result);
}

function settled(shown: string, result: { ok: boolean; exitCode: number | null; signal?: NodeJS.Signals | null; stdout: string; stderr: string; timeout?: Error }): { stdout: string; stderr: string } {
  if (result.ok) return { stdout: result.stdout, stderr: result.stderr };
  const how = result.timeout ? 'ran past its time' : result.signal ? `stopped by ${result.signal}` : `exited ${result.exitCode}`;
  throw new ProgramFailed(`${shown} ${how}: ${result.stderr.trim()}`, result.exitCode ?? result.signal ?? null, result.stdout, result.stderr);
}
