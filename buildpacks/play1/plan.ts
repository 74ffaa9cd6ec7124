import type { PlanContext, PlanContribution } from '../../src/buildpack/contract.js';
import { SYSTEM_VARIABLES } from '../../src/build/process-env.js';
import type { BuildStep, Decision, PlannedProcess, Runtime } from '../../src/plan/schema.js';
import { DEFAULT_RESTART, DEFAULT_STOP_GRACE_MS } from '../../src/run/backoff.js';
import { analyseConf } from './analyse-conf.js';
import { APPLICATION_CONF, FRAMEWORK_ID, readApplicationConf } from './application-conf.js';
import { Play1Errors } from './errors.js';
import { frameworkSource } from './framework-source.js';
import { resolveJvmMemory } from './jvm-memory.js';
import type { HostConfiguration } from './options.js';
import { resolvePlay1Version, VERSION_FILE, VERSION_VARIABLE } from './resolve-version.js';

/** Play 1.x starts slowly (JVM, plugins, JPA): the health check gives it time. */
export const PLAY1_HEALTH_TIMING = { readyTimeoutMs: 180_000, requestTimeoutMs: 30_000 } as const;

/**
 * Play 1.x plan: check Java, install the release from the mirror (through the
 * shared cache), resolve dependencies and precompile with the framework's own
 * commands, and run it in the foreground with the service's framework id on
 * the web port.
 */
export function planPlay1(config: HostConfiguration) {
  return async ({ files, env, host }: PlanContext): Promise<PlanContribution> => {
    const variable = env.entry(VERSION_VARIABLE);
    const hostDefault = config.defaultVersion;
    const { series, decision: versionDecision } = resolvePlay1Version({
      ...(variable ? { variable: { value: variable.value, origin: variable.origin } } : {}),
      ...(await fileText(files, VERSION_FILE)),
      ...(hostDefault ? { hostDefault } : {}),
    });

    const conf = readApplicationConf((await files.readText(APPLICATION_CONF)) ?? '', FRAMEWORK_ID);
    const problem = conf.problems[0];
    if (problem) {
      throw Play1Errors.PLAY1_CONF_INVALID.create({ message: `${APPLICATION_CONF} line ${problem.line}: ${problem.message}; Play would fail to read the file.`, file: APPLICATION_CONF });
    }
    const analysis = analyseConf(conf, (name) => {
      const entry = env.entry(name);
      if (entry) return entry.origin.startsWith(entry.source) ? entry.origin : `${entry.source} variables (${entry.origin})`;
      return SYSTEM_VARIABLES.includes(name) ? 'the host machine\'s environment' : undefined;
    });

    const release = frameworkSource(config, series);
    const frameworkDir = `.runplan/play-${series.release}`;
    const jvm = resolveJvmMemory(host.instance, conf.view.applied.get('jvm.memory'), config.jvm);
    const idArg = `--%${FRAMEWORK_ID}`;
    const confPort = conf.view.applied.get('http.port');

    const decisions: Decision[] = [
      {
        id: 'play1.framework-id',
        subject: 'Framework id',
        requested: null,
        source: 'specification (Play 1.x files)',
        resolved: FRAMEWORK_ID,
        reason: `the service runs Play 1.x applications with ${idArg}, so %${FRAMEWORK_ID}.-prefixed keys of ${APPLICATION_CONF} apply there and keys of other ids do not; play deps, precompile and run all get ${idArg}`,
        overridden: [],
      },
      analysis.decision,
      {
        id: 'play1.port',
        subject: 'HTTP port',
        requested: null,
        source: host.port === 8080 ? 'service (8080)' : 'host setting',
        resolved: String(host.port),
        reason: `Play listens on all interfaces at the port given by --http.port=${host.port}, which wins over http.port in ${APPLICATION_CONF}`,
        overridden: confPort ? [{ source: `${APPLICATION_CONF} ${confPort.writtenAs} (line ${confPort.line})`, value: confPort.value, reason: 'the command-line --http.port wins' }] : [],
      },
      jvm.decision,
      {
        id: 'play1.start',
        subject: 'Start command',
        requested: null,
        source: 'buildpack',
        resolved: `play run ${idArg} --http.port=${host.port} -Dprecompiled=true${jvm.args.length > 0 ? ` ${jvm.args.join(' ')}` : ''}`,
        reason: 'the framework runs in the foreground so the runner supervises it; -Dprecompiled=true makes it load what `play precompile` produced in the build instead of compiling at start-up (Play then runs in PROD mode)',
        overridden: [],
      },
    ];

    const runtimes: Runtime[] = [
      { name: 'play', version: series.release, distribution: `mirror ${release.url}`, decision: versionDecision },
      {
        name: 'java',
        version: 'host',
        distribution: 'host (JAVA_HOME/bin/java when the deployment sets JAVA_HOME, else java on PATH)',
        decision: {
          id: 'play1.java',
          subject: 'Java runtime',
          requested: null,
          source: 'host',
          resolved: 'host',
          reason: `Play ${series.release} was made for Java ${series.java.min}–${series.java.max}; the build step "java" shows the host's version and warns outside that range`,
          overridden: [],
        },
      },
    ];

    const step = (name: string, description: string, run: BuildStep['run'], produces: string[] = []): BuildStep => ({
      name,
      description,
      run,
      cwd: '.',
      env: {},
      pathPrepend: run.kind === 'exec' ? [frameworkDir] : [],
      produces,
      layer: null,
    });
    const steps: BuildStep[] = [
      step('java', 'find the Java runtime Play will use and check its version', {
        kind: 'action',
        action: 'play1/check-java',
        params: { release: series.release, javaMin: series.java.min, javaMax: series.java.max },
      }),
      step(
        'framework',
        `install Play ${series.release} from the mirror through the shared cache (SHA-256 verified)`,
        { kind: 'action', action: 'play1/install-framework', params: { version: release.version, url: release.url, sha256: release.sha256, dest: frameworkDir } },
        [frameworkDir],
      ),
      step('deps', 'resolve the dependencies of conf/dependencies.yml with the framework\'s own command', { kind: 'exec', argv: ['play', 'deps', '--sync', idArg] }, ['lib', 'modules']),
      step('precompile', 'compile Java sources and templates ahead of start-up with the framework\'s own command', { kind: 'exec', argv: ['play', 'precompile', idArg] }, ['precompiled']),
    ];

    const web: PlannedProcess = {
      name: 'web',
      role: 'web',
      command: { kind: 'exec', argv: ['play', 'run', idArg, `--http.port=${host.port}`, '-Dprecompiled=true', ...jvm.args] },
      cwd: '.',
      env: {},
      pathPrepend: [frameworkDir],
      port: host.port,
      restart: DEFAULT_RESTART,
      stopGraceMs: DEFAULT_STOP_GRACE_MS,
    };

    return {
      runtimes,
      decisions,
      steps,
      layers: [],
      processes: [web],
      files: [],
      warnings: analysis.warnings,
      healthTiming: PLAY1_HEALTH_TIMING,
    };
  };
}

async function fileText(files: PlanContext['files'], path: string): Promise<{ file?: string }> {
  const text = await files.readText(path);
  return text === undefined ? {} : { file: text };
}
