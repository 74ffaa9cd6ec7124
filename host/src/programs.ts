import { type RunProgramOptions, type StartProgramOptions, startProgram } from 'runplan/process';

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
  const outcome = await startProgram(file, args, options).done;
  if (outcome.startError !== undefined) throw new ProgramFailed(`${shown} could not start (${outcome.startError})`, outcome.startError, '', '');
  if (outcome.ok) return { stdout: outcome.stdout, stderr: outcome.stderr };
  const how = outcome.timeout ? 'ran past its time' : outcome.signal ? `stopped by ${outcome.signal}` : `exited ${outcome.exitCode}`;
  throw new ProgramFailed(`${shown} ${how}: ${outcome.stderr.trim()}`, outcome.exitCode ?? outcome.signal ?? null, outcome.stdout, outcome.stderr);
}
