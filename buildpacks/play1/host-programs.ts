import { execFile } from 'node:child_process';
import { systemEnvironment } from '../../src/build/process-env.js';

/** The feature release of a `java -version` banner: `"17.0.15"` → 17, `"1.8.0_292"` → 8. */
export function javaMajor(banner: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?[^"]*"/.exec(banner);
  if (!m) return undefined;
  const first = Number(m[1]);
  return first === 1 && m[2] !== undefined ? Number(m[2]) : first;
}

/** Runs a program of the host with the machine's variables; resolves with its output, or undefined when it cannot run. */
function run(file: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, args, { env: systemEnvironment(), timeout: 30_000 }, (error, stdout, stderr) => {
      const code = (error as NodeJS.ErrnoException | null)?.code;
      resolve(code === 'ENOENT' || code === 'EACCES' ? undefined : `${stdout}${stderr}`.trim());
    });
  });
}

/** The java on PATH: its `-version` banner and feature release; null when there is none. */
export async function probeJava(): Promise<{ major: number | null; banner: string } | null> {
  const banner = await run('java', ['-version']);
  return banner === undefined ? null : { major: javaMajor(banner) ?? null, banner: banner.split('\n')[0] ?? '' };
}

/** `python2 --version` / `python3 --version`, e.g. "Python 3.11.2"; null when absent. */
export async function probePython(command: 'python2' | 'python3'): Promise<string | null> {
  return (await run(command, ['--version'])) ?? null;
}
