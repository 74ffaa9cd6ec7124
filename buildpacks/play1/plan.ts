import {
  type BuildStep,
  decide,
  type Decision,
  DEFAULT_RESTART,
  DEFAULT_STOP_GRACE_MS,
  failureRule,
  lineExcerpt,
  type PlanContext,
  type PlanContribution,
  type PlannedProcess,
  type PlanWarning,
  previousDefault,
  type Runtime,
  SYSTEM_VARIABLES,
} from '../../src/kit/index.js';
import { analyseConf } from './analyse-conf.js';
import { APPLICATION_CONF, FRAMEWORK_ID, readApplicationConf } from './application-conf.js';
import { Play1Errors } from './errors.js';
import { frameworkSource } from './framework-source.js';
import { checkJava, checkPython, javaNeeds, pythonNeeds } from './host-check.js';
import { resolveJvmMemory } from './jvm-memory.js';
import type { HostConfiguration, Play1InventoryData } from './options.js';
import { resolvePlay1Version, VERSION_FILE, VERSION_VARIABLE } from './resolve-version.js';
import { PLAY1_SERIES, type Play1Series } from './versions.js';

/** Play 1.x starts slowly (JVM, plugins, JPA): the health check gives it time. */
const PLAY1_HEALTH_TIMING = { readyTimeoutMs: 180_000, requestTimeoutMs: 30_000 } as const;

/**
 * Play 1.x plan: check Java, install the release from the mirror (through the
 * shared cache), resolve dependencies and precompile with the framework's own
 * commands, and run it in the foreground with the service's framework id on
 * the web port.
 */
export function planPlay1(config: HostConfiguration) {
  return async ({ files, env, host, inventory, previous }: PlanContext): Promise<PlanContribution> => {
    const machine = inventory as Play1InventoryData;
    const variable = env.entry(VERSION_VARIABLE);
    const hostDefault = config.defaultVersion;
    const { series, decision: versionDecision } = resolvePlay1Version({
      ...(variable ? { variable: { value: variable.value, origin: variable.origin } } : {}),
      ...(await fileText(files, VERSION_FILE)),
      ...(hostDefault ? { hostDefault } : {}),
      previousDefault: keptRelease(previousDefault(previous, 'play1.version'), machine),
    });

    const conf = readApplicationConf((await files.readText(APPLICATION_CONF)) ?? '', FRAMEWORK_ID);
    const problem = conf.problems[0];
    if (problem) {
      throw Play1Errors.PLAY1_CONF_INVALID.create({ message: `${APPLICATION_CONF} line ${problem.line}: ${lineExcerpt(problem.message)}; Play would fail to read the file.`, file: APPLICATION_CONF });
    }
    const analysis = analyseConf(
      conf,
      (name) => {
        const entry = env.entry(name);
        if (entry) return entry.origin.startsWith(entry.source) ? entry.origin : `${entry.source} variables (${entry.origin})`;
        return SYSTEM_VARIABLES.includes(name) ? "the host machine's environment" : undefined;
      },
      (name) => env.get(name)?.includes('$') ?? false,
    );

    // The host check: before any build step, against what the programs of the
    // host answered when the inventory was gathered (checkPython throws).
    const python = planPython(machine, series);
    const java = planJava(env.get('JAVA_HOME'), machine, series);
    const release = frameworkSource(machine, series);
    const frameworkDir = `.runplan/play-${series.release}`;
    const jvm = resolveJvmMemory(host.instance, conf.view.applied.get('jvm.memory'), config.jvm);
    const idArg = `--%${FRAMEWORK_ID}`;
    const confPort = conf.view.applied.get('http.port');

    const decisions: Decision[] = [
      decide({
        id: 'play1.framework-id',
        subject: 'Framework id',
        basis: 'specification (Play 1.x files)',
        resolved: FRAMEWORK_ID,
        reason: `the service runs Play 1.x applications with ${idArg}, so %${FRAMEWORK_ID}.-prefixed keys of ${APPLICATION_CONF} apply there and keys of other ids do not; play deps, precompile and run all get ${idArg}`,
      }),
      analysis.decision,
      decide({
        id: 'play1.port',
        subject: 'HTTP port',
        basis: host.port === 8080 ? 'service (8080)' : 'host setting',
        resolved: String(host.port),
        reason: `Play listens on all interfaces at the port given by --http.port=${host.port}, which wins over http.port in ${APPLICATION_CONF}`,
        lost: confPort ? [{ source: `${APPLICATION_CONF} ${confPort.writtenAs} (line ${confPort.line})`, value: confPort.value, reason: 'the command-line --http.port wins' }] : [],
      }),
      jvm.decision,
      decide({
        id: 'play1.start',
        subject: 'Start command',
        basis: 'buildpack',
        resolved: `play run ${idArg} --http.port=${host.port} -Dprecompiled=true${jvm.args.length > 0 ? ` ${jvm.args.join(' ')}` : ''}`,
        reason:
          'the framework runs in the foreground so the runner supervises it; -Dprecompiled=true makes it load what `play precompile` produced in the build instead of compiling at start-up (Play then runs in PROD mode)',
      }),
    ];

    const runtimes: Runtime[] = [
      { name: 'play', version: series.release, distribution: `mirror ${release.url}`, decision: versionDecision },
      { name: 'java', version: java.version, distribution: java.distribution, needs: javaNeeds(series, java.command), decision: java.decision },
      python.runtime,
    ];

    const step = (name: string, description: string, run: BuildStep['run']): BuildStep => ({
      name,
      description,
      run,
      cwd: '.',
      env: {},
      pathPrepend: run.kind === 'exec' ? [frameworkDir] : [],
      layer: null,
    });
    const steps: BuildStep[] = [
      {
        ...step('java', "show the version of the Java runtime Play's launcher will use", { kind: 'exec', argv: [java.command, '-version'] }),
        onFailure: [
          failureRule(
            Play1Errors.PLAY1_JAVA_NOT_FOUND,
            { kind: 'not-found' },
            {
              message: `${java.command} cannot be run; Play's launcher needs it.`,
              ...(java.command === 'java' ? {} : { variable: 'JAVA_HOME' }),
            },
          ),
        ],
      },
      {
        ...step('python', `show the version of the Python ${series.python} the play launcher of series ${series.series} is written for`, {
          kind: 'exec',
          argv: [series.pythonCommand, '--version'],
        }),
        // Checked again where the build runs: a plan may be carried out on another machine than the one it was made for.
        onFailure: [
          failureRule(
            Play1Errors.PLAY1_PYTHON_MISSING,
            { kind: 'any' },
            {
              message: `${series.pythonCommand} cannot be run on this host; the play launcher of Play ${series.release} (series ${series.series}) is a Python ${series.python} script.`,
              ...(series.python === 3 ? { fix: 'Install Python 3 on the host (e.g. apt-get install python3).' } : {}),
            },
          ),
        ],
      },
      step('framework', `install Play ${series.release} from the mirror through the shared cache (SHA-256 verified)`, {
        kind: 'install',
        source: { type: 'archive', url: release.url, sha256: release.sha256 },
        target: frameworkDir,
        // Some distributions lost the launcher's execute bit on the way; it is run directly.
        executables: ['play'],
        links: [],
      }),
      step('deps', "resolve the dependencies of conf/dependencies.yml with the framework's own command", { kind: 'exec', argv: ['play', 'deps', '--sync', idArg] }),
      step('precompile', "compile Java sources and templates ahead of start-up with the framework's own command", { kind: 'exec', argv: ['play', 'precompile', idArg] }),
      {
        // The launchers of older series exit 0 when the JVM they start fails (NOTES.md): the
        // build would go on, and only the start, which needs precompiled/, would fail.
        ...step('precompile-check', 'check that play precompile wrote precompiled/, which -Dprecompiled=true loads at start', {
          kind: 'exec',
          argv: ['test', '-d', 'precompiled'],
        }),
        onFailure: [
          failureRule(
            Play1Errors.PLAY1_PRECOMPILE_NO_OUTPUT,
            { kind: 'any' },
            { message: `play precompile (Play ${series.release}) finished without writing precompiled/; its launcher reports success even when the JVM fails to start.` },
          ),
        ],
      },
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
      // CC_PRE_BUILD_HOOK once Java, Python and the framework are in place, before play deps; CC_POST_BUILD_HOOK before the check of what precompile wrote.
      hookPoints: { dependencies: 'deps', checks: 'precompile-check' },
      files: [],
      warnings: [...analysis.warnings, ...java.warnings],
      healthTiming: PLAY1_HEALTH_TIMING,
    };
  };
}

/** The release a previous plan took from the default, when this host can still install it. */
function keptRelease(release: string | undefined, machine: Play1InventoryData): string | undefined {
  return release !== undefined && PLAY1_SERIES.some((s) => s.release === release) && machine.checksums[release] !== undefined ? release : undefined;
}

/** The Python the series' launcher is written for, found on this host (else RUNPLAN_E_PLAY1_PYTHON_MISSING), as a runtime of the plan. */
function planPython(machine: Play1InventoryData, series: Play1Series): { runtime: Runtime } {
  const found = checkPython(series, machine);
  return {
    runtime: {
      name: 'python',
      version: found.replace(/^Python /, ''),
      distribution: `host (${series.pythonCommand} on PATH)`,
      needs: pythonNeeds(series),
      decision: decide({
        id: 'play1.python',
        subject: 'Python for the play launcher',
        basis: `Play ${series.series} launcher`,
        resolved: `${series.pythonCommand} (${found})`,
        reason:
          series.python === 2
            ? `the play launcher of series ${series.series} is a Python 2 script (series up to 1.6; 1.7 moved the scripts to Python 3), so ${series.pythonCommand} must be on the host; the build step "python" checks it again where the build runs`
            : `the play launcher of series ${series.series} is a Python 3 script (since 1.7), so ${series.pythonCommand} must be on the host; the build step "python" checks it again where the build runs`,
      }),
    },
  };
}

/**
 * The Java Play's launcher will use: JAVA_HOME/bin/java when the deployment sets
 * JAVA_HOME (its version shows in the build), else the java on PATH, whose
 * version the inventory knows: none is RUNPLAN_E_PLAY1_JAVA_NOT_FOUND before
 * the build, one the series cannot run RUNPLAN_E_PLAY1_JAVA_UNSUPPORTED, and one
 * above the range it was only not tested with a warning.
 */
function planJava(javaHome: string | undefined, machine: Play1InventoryData, series: Play1Series) {
  const range = `${series.java.min}–${series.java.max}`;
  const warnings: PlanWarning[] = [];
  if (javaHome) {
    const command = `${javaHome.replace(/\/$/, '')}/bin/java`;
    return {
      command,
      version: 'JAVA_HOME',
      distribution: `JAVA_HOME (${command})`,
      warnings,
      decision: javaDecision(
        'env JAVA_HOME',
        javaHome,
        `JAVA_HOME/bin/java; Play ${series.release} needs Java ${range}${series.javaAbove === 'refused' ? " (newer ones refuse its launcher's JVM options)" : ''}; the deployment chose this java, whose version is not known before the build: the build step "java" shows it`,
      ),
    };
  }
  if (machine.java === null) {
    throw Play1Errors.PLAY1_JAVA_NOT_FOUND.create({ message: `this host has no java on PATH, and Play ${series.release} (made for Java ${range}) needs one.` });
  }
  const major = machine.java.major;
  warnings.push(...checkJava(series, machine.java, machine));
  return {
    command: 'java',
    version: major === null ? 'unknown' : String(major),
    distribution: `host (java on PATH: ${machine.java.banner})`,
    warnings,
    decision: javaDecision(
      'host',
      null,
      `the java on PATH (${machine.java.banner}); Play ${series.release} needs Java ${range}${series.javaAbove === 'refused' ? " (newer ones refuse its launcher's JVM options)" : ' (newer ones are untested)'}${warnings.length > 0 ? ', so this one is untested' : ''}`,
      major === null ? 'unknown' : String(major),
    ),
  };
}

function javaDecision(source: string, requested: string | null, reason: string, resolved = 'JAVA_HOME'): Decision {
  return decide({ id: 'play1.java', subject: 'Java runtime', requests: [{ source, value: requested }], resolved, reason });
}

async function fileText(files: PlanContext['files'], path: string): Promise<{ file?: string }> {
  const text = await files.readText(path);
  return text === undefined ? {} : { file: text };
}
