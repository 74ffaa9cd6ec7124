import type { BuildAction } from '../../src/buildpack/contract.js';
import { childEnvironment } from '../../src/build/process-env.js';
import { Play1Errors } from './errors.js';
import { Play1Warnings } from './warnings.js';

export interface CheckJavaParams {
  readonly release: string;
  readonly javaMin: number;
  readonly javaMax: number;
}

/** The feature release of a `java -version` banner: `"17.0.15"` → 17, `"1.8.0_292"` → 8. */
export function javaMajor(banner: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?[^"]*"/.exec(banner);
  if (!m) return undefined;
  const first = Number(m[1]);
  return first === 1 && m[2] !== undefined ? Number(m[2]) : first;
}

/**
 * Build action `play1/check-java`: finds the java Play's launcher will use
 * (JAVA_HOME/bin/java when the deployment sets JAVA_HOME, else java on PATH),
 * shows its version, and warns when it is outside the range the release was
 * made for. Planning cannot know the host's Java; this is where it shows.
 */
export const checkJava: BuildAction = async (raw, { appDir, env, log, signal }) => {
  const params = raw as unknown as CheckJavaParams;
  const javaHome = env.get('JAVA_HOME');
  const java = javaHome ? `${javaHome.replace(/\/$/, '')}/bin/java` : 'java';
  const { execa } = await import('execa');
  const result = await execa(java, ['-version'], {
    cwd: appDir,
    env: childEnvironment(appDir, env, {}, []),
    extendEnv: false,
    reject: false,
    all: true,
    ...(signal ? { cancelSignal: signal } : {}),
  });
  if (result.failed && (result.code === 'ENOENT' || result.exitCode === undefined)) {
    throw Play1Errors.PLAY1_JAVA_NOT_FOUND.create({
      message: `${java} cannot be run (${result.code ?? result.originalMessage}); Play's launcher needs it.`,
      ...(javaHome ? { variable: 'JAVA_HOME' } : {}),
    });
  }
  const banner = String(result.all ?? '');
  for (const line of banner.split('\n').filter(Boolean)) log(line);
  const major = javaMajor(banner);
  if (major === undefined) {
    log(`could not read the Java version from ${java} -version`);
  } else if (major < params.javaMin || major > params.javaMax) {
    const w = Play1Warnings.PLAY1_JAVA_UNTESTED;
    log(`warning ${w.code}: Play ${params.release} was made for Java ${params.javaMin}–${params.javaMax}; this host's java is ${major}. ${w.fix}`);
  } else {
    log(`Java ${major} is within the range Play ${params.release} was made for (${params.javaMin}–${params.javaMax})`);
  }
};
