import { runProgram } from '../../src/kit/index.js';

/** The feature release of a `java -version` banner: `"17.0.15"` → 17, `"1.8.0_292"` → 8. */
export function javaMajor(banner: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?[^"]*"/.exec(banner);
  if (!m) return undefined;
  const first = Number(m[1]);
  return first === 1 && m[2] !== undefined ? Number(m[2]) : first;
}

/** Runs a program of the host with the machine's variables; resolves with its output and whether it exited 0, or undefined when it cannot run. */
async function run(file: string, args: string[]): Promise<{ output: string; ok: boolean } | undefined> {
  const ran = await runProgram(file, args);
  return ran === undefined ? undefined : { output: `${ran.stdout}${ran.stderr}`.trim(), ok: ran.ok };
}

/** The java on PATH: its `-version` banner and feature release; null when there is none. */
export async function probeJava(): Promise<{ major: number | null; banner: string } | null> {
  const ran = await run('java', ['-version']);
  return ran === undefined ? null : { major: javaMajor(ran.output) ?? null, banner: ran.output.split('\n')[0] ?? '' };
}

/**
 * The version a `pythonN --version` printed, e.g. "Python 3.11.2"; null unless it
 * exited 0 with such a line: a version manager's shim answers for a Python it
 * does not provide with exit 127 and "pyenv: python2: command not found".
 */
export function pythonVersion(ran: { output: string; ok: boolean } | undefined): string | null {
  if (!ran?.ok) return null;
  return /^Python \d+\.\d+(?:\.\d+)?\S*$/m.exec(ran.output)?.[0] ?? null;
}

/** The major version of a pythonVersion() answer: "Python 2.7.18" → 2. */
export function pythonMajor(version: string): number | undefined {
  const m = /^Python (\d+)\./.exec(version);
  return m ? Number(m[1]) : undefined;
}

/** `python2 --version` / `python3 --version`, e.g. "Python 3.11.2"; null when absent or not working. */
export async function probePython(command: 'python2' | 'python3'): Promise<string | null> {
  return pythonVersion(await run(command, ['--version']));
}
