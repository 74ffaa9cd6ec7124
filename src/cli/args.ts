import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { parseEnvFile, parseOptionAssignment, type Assignment } from '../env/assignments.js';
import type { EnvironmentInput, LinkedVariables } from '../env/assemble.js';
import { CoreErrors } from '../errors/core-errors.js';
import { assertPort, parseMemory, type HostSettings } from '../host/host-settings.js';

const COMMANDS = ['plan', 'build', 'run', 'check', 'image', 'deploy', 'k8s', 'stack', 'inventory', 'diff', 'schema'] as const;
type CommandName = (typeof COMMANDS)[number];

export interface CliArguments {
  readonly command: CommandName;
  /** Application directory (plan/build/run), base URL (check) or the old plan (diff). */
  readonly target: string | undefined;
  /** The new plan (diff). */
  readonly second: string | undefined;
  readonly type: string | undefined;
  readonly json: boolean;
  /** --buildpack MODULE (repeatable): a host's buildpacks, added to the built-in ones. */
  readonly buildpacks: readonly string[];
  /** --events: NDJSON events on stdout (output.ts). */
  readonly events: boolean;
  /** --inventory FILE (plan, build, run): plan from it instead of this machine. */
  readonly inventory: string | undefined;
  /** --previous FILE (plan, build, run): keep the defaults that plan resolved. */
  readonly previous: string | undefined;
  /** --plan FILE (build, run): carry out this saved plan instead of planning. */
  readonly plan: string | undefined;
  /** --out FILE|DIR (inventory, image, k8s): where to write. */
  readonly out: string | undefined;
  /** --tag, --base, --oci (image). */
  readonly tag: string | undefined;
  readonly base: string | undefined;
  readonly oci: string | undefined;
  /** --runner local|docker (run). */
  readonly runner: 'local' | 'docker';
  /** --engine swarm|podman (deploy), --replicas N. */
  readonly engine: string | undefined;
  readonly replicas: number | undefined;
  /** --image REF (deploy, k8s): an image already built. */
  readonly image: string | undefined;
  /** --remove (deploy): remove the application's services instead. */
  readonly remove: boolean;
  /** --rebuild (stack). */
  readonly rebuild: boolean;
  /** --no-cache (build, run, image): build without the build cache. */
  readonly noCache: boolean;
  readonly env: EnvironmentInput;
  /** The variables whose value was written in the arguments (--env NAME=VALUE), not taken from runplan's environment or a file. */
  readonly valuesInArguments: readonly Assignment[];
  readonly host: Partial<HostSettings>;
  /** What --cpus and --memory gave (host.instance fills the other from this machine): a saved plan fills it from its own instance instead. */
  readonly instanceGiven: { readonly cpus?: number; readonly memoryMb?: number };
}

export const USAGE = `Usage:
  runplan plan  <dir> [options] [--json]   print the plan and the reason for every decision
  runplan build <dir> [options]            build in a fresh copy of the application
  runplan run   <dir> [options]            build, start, health-check, serve until Ctrl-C
  runplan check <base-url> [options]       run only the health checks against a running app
  runplan image <dir> [options] [--tag T] [--base IMAGE] [--out DIR] [--oci DIR]
                                           the plan as an OCI image (Docker engine at DOCKER_HOST)
  runplan deploy <dir> --engine swarm [--replicas N] [options]
                                           one swarm service per process; updates keep serving
  runplan deploy <dir> --engine swarm --remove
                                           remove the application's services, network, secrets
  runplan deploy <dir> --engine podman [options]
                                           the Kubernetes manifests played by podman kube play;
                                           serves until Ctrl-C, then removes what it made
  runplan k8s   <dir> --out DIR [--image REF] [--replicas N] [options]
                                           Kubernetes manifests of the plan (and its image)
  runplan stack [--type T] [--rebuild]     build the stack images (from this machine's Debian)
  runplan inventory [--type T] [--out FILE]  write what planning learns from this machine
  runplan diff  <old.json> <new.json> [--json]  what changed between two plans, and why
  runplan schema                           print the run plan's JSON Schema

Options:
  --type T                     skip detection and use this buildpack: node, ruby, play1, or the id of
                               one given with --buildpack
  --buildpack MODULE           add a host's buildpack (a path, or a package installed where runplan
                               runs; repeatable): plan, build, run, check, inventory, image, deploy, k8s
  --env NAME=VALUE             an application variable (repeatable); never a secret: arguments are
                               readable by every process of the machine
  --env NAME                   the same, its value taken from runplan's own environment (for secrets)
  --app-env-file FILE          application variables from a NAME=VALUE file (repeatable; not
                               --env-file, which Node.js itself reads when started as node cli.js)
  --addon-env ADDON:NAME=VALUE a variable injected by a linked add-on (repeatable);
                               ADDON:NAME takes the value from runplan's own environment
  --addon-env-file ADDON=FILE  the variables of a linked add-on, from a file (repeatable)
  --port N                     web port (default 8080)
  --cpus N, --memory SIZE      instance size declared by the host (default: this machine;
                               with --plan: the one the plan was sized for)
  --build-cpus N, --build-memory SIZE
                               a dedicated build instance: the build's steps and hooks are
                               sized for it (Node.js's heap), the processes for --cpus/--memory
  --cache-dir DIR              runtimes, downloads and dependency layers, shared by all apps
                               (default $RUNPLAN_CACHE_DIR or ~/.cache/runplan)
  --work-dir DIR               where builds are made and run (default $RUNPLAN_WORK_DIR or <cache-dir>/apps)
  --timeout SECONDS            how long the app may take to become healthy (default 60)
  --step-timeout SECONDS       build, run: stop a build step (and all it started) after this long
                               (default $RUNPLAN_BUILD_STEP_TIMEOUT or 1800)
  --lock-wait SECONDS          build, run: wait this long for another build of the app; 0 fails at once
                               (default $RUNPLAN_BUILD_LOCK_WAIT or 600)
  --stability-window SECONDS   run, deploy: once healthy, the web process must stay up this long more
                               before the deployment is accepted; 0 accepts at once
                               (default $RUNPLAN_STABILITY_WINDOW or 3)
  --buildpack-timeout SECONDS  how long one call into a buildpack's code (loading it, detect, plan) may
                               take (default $RUNPLAN_BUILDPACK_TIMEOUT or 60; gathering an inventory:
                               $RUNPLAN_INVENTORY_TIMEOUT or 600)
  --ssh-known-hosts FILE       the host's known_hosts for git over SSH during builds (CC_SSH_PRIVATE_KEY);
                               default $RUNPLAN_SSH_KNOWN_HOSTS, else host keys are trusted on first use
  --json                       machine-readable output: plan and diff print their JSON; the other
                               commands one JSON result, or {"ok": false, "error": {code, message,
                               fix, subject…}}, on stdout (lines for people go to stderr)
  --events                     NDJSON events on stdout while it works (log lines, step-started/
                               -finished with durations, process-started/-exited, health-check),
                               then a result or error event
  --inventory FILE             plan from a saved inventory: runs no program, opens no connection
  --previous FILE              keep what a previous plan took from defaults (latest LTS…) while still available
  --plan FILE                  build or run a saved plan as made, without planning again; give
                               the values of its secret variables with --env NAME / --app-env-file
  --out FILE|DIR               where \`inventory\` (default: standard output), \`image\` (the context,
                               without building) and \`k8s\` write
  --runner local|docker        run: processes here (default) or one container each
  --tag T, --base IMAGE        image: its name, the image it builds on (default: the type's stack)
  --oci DIR                    image: also write an OCI layout
  --engine swarm|podman        deploy: the engine (podman: \`podman kube play\` of the manifests)
  --replicas N                 deploy --engine swarm: the web service's replicas (default 2);
                               k8s: the web Deployment's replicas (default 2)
  --image REF                  deploy, k8s: an image already built (default: build it)
  --remove                     deploy: remove what runplan made in the swarm for the application
  --no-cache                   build, run, image: restore nothing from the build cache for this build
                               (what it builds is saved for the next one)
  -h, --help, -v, --version

Exit statuses: 0 success (diff: no difference), 1 the deployment failed (diff: the plans
differ), 2 bad input, 70 internal error, 130 interrupted.`;

/** node:util's own parse errors (unknown option, missing value) are usage errors. */
function usageErrors<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw CoreErrors.CLI_USAGE.create({ message: (error as Error).message });
  }
}

/**
 * Node.js 20 applies `--env-file F` (and `--env-file-if-exists`) found anywhere in its
 * argv, even after the script (nodejs/node#54232): it reads F and obeys its NODE_OPTIONS
 * before any of runplan's code runs. runplan's executable starts Node with `--` first
 * (its shebang), which ends that scan; these spellings are refused here so that they
 * never work by accident and the option has a name Node does not read.
 */
function assertNoNodeOption(argv: readonly string[]): void {
  for (const arg of argv) {
    const m = /^(--env-file(?:-if-exists)?)(?:=|$)/.exec(arg);
    if (!m) continue;
    throw CoreErrors.CLI_USAGE.create({
      message: `${m[1]} is an option of Node.js itself, which reads the file before runplan starts when runplan is run as \`node cli.js\`; runplan's option is --app-env-file FILE.`,
      fix: 'Give application variables with --app-env-file FILE (or --env NAME=VALUE), and start runplan through its executable (`runplan …`, whose shebang runs `node --`), never as `node cli.js …`.',
    });
  }
}

/** A number of seconds given on the command line, in milliseconds. */
function secondsOption(option: string, text: string, zeroAllowed: boolean): number {
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(seconds) || (!zeroAllowed && seconds <= 0) || seconds > 2_000_000) {
    throw CoreErrors.CLI_USAGE.create({ message: `${option} must be a ${zeroAllowed ? '' : 'positive '}number of seconds (at most 2000000), got ${quoteArgument(text)}.` });
  }
  return Math.round(seconds * 1000);
}

/** `environment`: runplan's own, where `--env NAME` and `--addon-env ADDON:NAME` take their values. */
export async function parseCli(argv: readonly string[], environment: NodeJS.ProcessEnv = process.env): Promise<CliArguments> {
  assertNoNodeOption(argv);
  const parsed = usageErrors(() =>
    parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        type: { type: 'string' },
        env: { type: 'string', multiple: true },
        'app-env-file': { type: 'string', multiple: true },
        'addon-env': { type: 'string', multiple: true },
        'addon-env-file': { type: 'string', multiple: true },
        port: { type: 'string' },
        cpus: { type: 'string' },
        memory: { type: 'string' },
        'build-cpus': { type: 'string' },
        'build-memory': { type: 'string' },
        'cache-dir': { type: 'string' },
        'work-dir': { type: 'string' },
        timeout: { type: 'string' },
        'step-timeout': { type: 'string' },
        'lock-wait': { type: 'string' },
        'stability-window': { type: 'string' },
        'buildpack-timeout': { type: 'string' },
        'ssh-known-hosts': { type: 'string' },
        json: { type: 'boolean' },
        events: { type: 'boolean' },
        buildpack: { type: 'string', multiple: true },
        inventory: { type: 'string' },
        previous: { type: 'string' },
        plan: { type: 'string' },
        out: { type: 'string' },
        tag: { type: 'string' },
        base: { type: 'string' },
        oci: { type: 'string' },
        runner: { type: 'string' },
        engine: { type: 'string' },
        replicas: { type: 'string' },
        image: { type: 'string' },
        remove: { type: 'boolean' },
        rebuild: { type: 'boolean' },
        'no-cache': { type: 'boolean' },
      },
    }),
  );
  const [command, target, ...extra] = parsed.positionals;
  if (!command || !(COMMANDS as readonly string[]).includes(command)) {
    throw CoreErrors.CLI_USAGE.create({ message: command ? `unknown command "${command}".` : 'no command given.' });
  }
  const needs = { check: 'a base URL', diff: 'two plan files', schema: undefined, inventory: undefined, stack: undefined } as Record<string, string | undefined>;
  const need = command in needs ? needs[command] : 'an application directory';
  if (need !== undefined && target === undefined) throw CoreErrors.CLI_USAGE.create({ message: `${command} needs ${need}.` });
  if (need === undefined && target !== undefined) throw CoreErrors.CLI_USAGE.create({ message: `unexpected argument "${target}".` });
  const second = command === 'diff' ? extra.shift() : undefined;
  if (command === 'diff' && second === undefined) throw CoreErrors.CLI_USAGE.create({ message: 'diff needs two plan files: the old one, then the new one.' });
  if (extra.length > 0) throw CoreErrors.CLI_USAGE.create({ message: `unexpected argument "${extra[0]}".` });
  const v = parsed.values;
  const only = (option: string, commands: readonly string[]) => {
    if ((v as Record<string, unknown>)[option] !== undefined && !commands.includes(command)) {
      throw CoreErrors.CLI_USAGE.create({ message: `--${option} is an option of ${commands.join(', ')}, not of ${command}.` });
    }
  };
  const carriers = ['build', 'run', 'image', 'deploy', 'k8s'];
  only('inventory', ['plan', ...carriers]);
  only('previous', ['plan', ...carriers]);
  only('plan', carriers);
  only('ssh-known-hosts', ['plan', ...carriers]);
  only('out', ['inventory', 'image', 'k8s']);
  only('tag', ['image']);
  only('base', ['image', 'deploy', 'k8s']);
  only('oci', ['image']);
  only('no-cache', ['build', 'run', 'image']);
  only('runner', ['run']);
  only('engine', ['deploy']);
  only('replicas', ['deploy', 'k8s']);
  only('image', ['deploy', 'k8s']);
  only('remove', ['deploy']);
  only('rebuild', ['stack']);
  only('buildpack', ['plan', 'check', 'inventory', ...carriers]);
  only('buildpack-timeout', ['plan', 'check', 'inventory', ...carriers]);
  if (v.json && v.events) throw CoreErrors.CLI_USAGE.create({ message: '--json and --events are two output formats: choose one.' });
  if (v.runner !== undefined && v.runner !== 'local' && v.runner !== 'docker') throw CoreErrors.CLI_USAGE.create({ message: `--runner is local or docker, not ${quoteArgument(v.runner)}.` });
  if (command === 'deploy' && v.engine !== 'swarm' && v.engine !== 'podman') {
    throw CoreErrors.CLI_USAGE.create({ message: `deploy needs --engine swarm or --engine podman${v.engine ? `, not ${quoteArgument(v.engine)}` : ''}.` });
  }
  if (v.engine === 'podman' && (v.remove || v.replicas !== undefined || v.image !== undefined)) {
    throw CoreErrors.CLI_USAGE.create({ message: 'deploy --engine podman builds the image and runs one replica until stopped: --remove, --replicas and --image are options of --engine swarm.' });
  }
  if (command === 'k8s' && v.out === undefined) throw CoreErrors.CLI_USAGE.create({ message: 'k8s needs --out DIR, where the manifests are written.' });
  const replicas = v.replicas === undefined ? undefined : Number(v.replicas);
  if (replicas !== undefined && (!Number.isInteger(replicas) || replicas < 1))
    throw CoreErrors.CLI_USAGE.create({ message: `--replicas must be a positive integer, got ${quoteArgument(v.replicas ?? '')}.` });
  if (v.plan !== undefined && (v.inventory !== undefined || v.previous !== undefined)) {
    throw CoreErrors.CLI_USAGE.create({ message: '--plan carries out a plan already made: --inventory and --previous only apply when planning.' });
  }

  const application: Assignment[] = [];
  const valuesInArguments: Assignment[] = [];
  const fromOption = (text: string, origin: string): Assignment => {
    const { inArguments, ...assignment } = parseOptionAssignment(text, origin, environment);
    if (inArguments) valuesInArguments.push(assignment);
    return assignment;
  };
  for (const file of v['app-env-file'] ?? []) application.push(...parseEnvFile(await readEnvFile(file), file));
  for (const text of v.env ?? []) application.push(fromOption(text, '--env'));

  const links = new Map<string, Record<string, string>>();
  const link = (name: string) => links.get(name) ?? links.set(name, {}).get(name)!;
  for (const spec of v['addon-env-file'] ?? []) {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw CoreErrors.CLI_USAGE.create({ message: `--addon-env-file expects ADDON=FILE, got ${quoteArgument(spec)}.` });
    const file = spec.slice(eq + 1);
    for (const a of parseEnvFile(await readEnvFile(file), file)) link(spec.slice(0, eq))[a.name] = a.value;
  }
  for (const spec of v['addon-env'] ?? []) {
    const colon = spec.indexOf(':');
    const eq = spec.indexOf('=');
    // Without "ADDON:" before the name nothing tells the parts apart (a secret pasted alone): none of it is shown.
    if (colon <= 0 || (eq >= 0 && eq < colon)) {
      throw CoreErrors.CLI_USAGE.create({ message: `--addon-env expects ADDON:NAME=VALUE, got ${spec.length} character(s) without "ADDON:" before the name (not shown: they may hold a secret).` });
    }
    const a = fromOption(spec.slice(colon + 1), `--addon-env ${spec.slice(0, colon)}`);
    link(spec.slice(0, colon))[a.name] = a.value;
  }
  const linkList: LinkedVariables[] = [...links].map(([name, variables]) => ({ name, variables }));

  const host: { -readonly [K in keyof HostSettings]?: HostSettings[K] } = {};
  if (v.port !== undefined) {
    host.port = /^\d{1,5}$/.test(v.port) ? Number(v.port) : Number.NaN;
    if (!Number.isInteger(host.port) || host.port < 1 || host.port > 65535) {
      throw CoreErrors.HOST_INVALID_SETTING.create({ message: `--port must be an integer from 1 to 65535, got ${quoteArgument(v.port)}.` });
    }
    assertPort(host.port, '--port');
  }
  let instanceGiven: CliArguments['instanceGiven'] = {};
  if (v.cpus !== undefined || v.memory !== undefined) {
    if (v.cpus !== undefined && !/^[1-9]\d{0,3}$/.test(v.cpus)) {
      throw CoreErrors.HOST_INVALID_SETTING.create({ message: `--cpus must be a positive integer, got ${quoteArgument(v.cpus)}.` });
    }
    const cpus = v.cpus === undefined ? undefined : Number(v.cpus);
    const memoryMb = v.memory === undefined ? undefined : parseMemory(v.memory);
    const { availableParallelism, totalmem } = await import('node:os');
    host.instance = { cpus: cpus ?? availableParallelism(), memoryMb: memoryMb ?? Math.floor(totalmem() / 1048576) };
    instanceGiven = { ...(cpus === undefined ? {} : { cpus }), ...(memoryMb === undefined ? {} : { memoryMb }) };
  }
  if (v['build-cpus'] !== undefined || v['build-memory'] !== undefined) {
    if (v['build-cpus'] !== undefined && !/^[1-9]\d{0,3}$/.test(v['build-cpus'])) {
      throw CoreErrors.HOST_INVALID_SETTING.create({ message: `--build-cpus must be a positive integer, got ${quoteArgument(v['build-cpus'])}.` });
    }
    const { availableParallelism, totalmem } = await import('node:os');
    // The half not given is the machine's, as for --cpus and --memory.
    host.buildInstance = {
      cpus: v['build-cpus'] === undefined ? availableParallelism() : Number(v['build-cpus']),
      memoryMb: v['build-memory'] === undefined ? Math.floor(totalmem() / 1048576) : parseMemory(v['build-memory']),
    };
  }
  if (v['cache-dir'] !== undefined) host.cacheDir = v['cache-dir'];
  if (v['work-dir'] !== undefined) host.workDir = v['work-dir'];
  if (v.timeout !== undefined) {
    const seconds = Number(v.timeout);
    if (!Number.isFinite(seconds) || seconds <= 0) throw CoreErrors.CLI_USAGE.create({ message: `--timeout must be a positive number of seconds, got ${quoteArgument(v.timeout)}.` });
    host.healthTimeoutMs = Math.round(seconds * 1000);
  }
  if (v['step-timeout'] !== undefined) host.buildStepTimeoutMs = secondsOption('--step-timeout', v['step-timeout'], false);
  if (v['lock-wait'] !== undefined) host.buildLockWaitMs = secondsOption('--lock-wait', v['lock-wait'], true);
  if (v['stability-window'] !== undefined) host.stabilityWindowMs = secondsOption('--stability-window', v['stability-window'], true);
  if (v['buildpack-timeout'] !== undefined) host.buildpackTimeoutMs = secondsOption('--buildpack-timeout', v['buildpack-timeout'], false);
  if (v['ssh-known-hosts'] !== undefined) {
    if (v['ssh-known-hosts'] === '') throw CoreErrors.CLI_USAGE.create({ message: '--ssh-known-hosts needs the path of a known_hosts file.' });
    host.sshKnownHostsFile = v['ssh-known-hosts'];
  }

  return {
    command: command as CommandName,
    target,
    second,
    type: v.type,
    json: v.json ?? false,
    events: v.events ?? false,
    buildpacks: v.buildpack ?? [],
    inventory: v.inventory,
    previous: v.previous,
    plan: v.plan,
    out: v.out,
    tag: v.tag,
    base: v.base,
    oci: v.oci,
    runner: (v.runner ?? 'local') as 'local' | 'docker',
    engine: v.engine,
    replicas,
    image: v.image,
    remove: v.remove ?? false,
    rebuild: v.rebuild ?? false,
    noCache: v['no-cache'] ?? false,
    env: { application, links: linkList },
    valuesInArguments,
    host,
    instanceGiven,
  };
}

// Enough to recognise a mistyped argument; an argument may be anything, of any length.
const QUOTED_ARGUMENT_MAX = 40;

/** An argument as given, bounded and with control characters escaped (JSON string syntax). */
export function quoteArgument(text: string): string {
  const head = [...text].slice(0, QUOTED_ARGUMENT_MAX).join('');
  return `${JSON.stringify(head)}${head.length < text.length ? '…' : ''}`;
}

async function readEnvFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw CoreErrors.ENV_FILE_UNREADABLE.create({ message: `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`, file: path });
  }
}
