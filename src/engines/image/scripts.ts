import { shellWord } from '../../shell/shell-word.js';
import { CoreErrors } from '../../errors/core-errors.js';
import type { Bindings } from '../../plan/placeholders.js';
import type { PlannedProcess, Readiness, RunPlan } from '../../plan/schema.js';
import { assemblePath, type LoweredChunk, type LoweredFile, type LoweredPlan, type LoweredStep, lowerPlan } from '../../lowering/lower.js';
import { STACK_IMAGE_PROGRAMS } from '../stack-images.js';
import { readinessTest } from '../../health/readiness.js';
import { DEFAULT_BUILD_STEP_TIMEOUT_MS } from '../../host/host-settings.js';
import { REFUSAL_PREFIX } from '../../executor/refusal.js';
import { stepTimeoutError } from '../../steps/command-step.js';

/** Where the plan's placeholders point inside an image: its directories, and its stack's programs. */
export const IMAGE_BINDINGS = { APP_HOME: '/app', RUN_DIR: '/run/runplan', ...STACK_IMAGE_PROGRAMS } as const satisfies Bindings;
/**
 * The plan as every image engine carries it out (its image's build, Swarm's services,
 * Kubernetes' Deployments): lowered with the image's bindings. An engine given an image
 * built elsewhere lowers the plan here too, as that image's build did.
 */
export function lowerForImage(plan: RunPlan): LoweredPlan {
  return lowerPlan(plan, IMAGE_BINDINGS);
}
/** Where runplan's scripts live in an image (outside the application, owned by root). */
export const IMAGE_SCRIPTS_DIR = '/opt/runplan';

/**
 * `export NAME=value …; export PATH=…` for a lowered step's or process's
 * environment: mergeEnvironment's rule (src/lowering/lower.ts) in shell, over
 * the container's environment (the deployment's, from the image and the engine).
 */
function exportEnvironment({ env, pathPrepend }: Pick<LoweredStep, 'env' | 'pathPrepend'>): string {
  const parts = Object.entries(env).map(([name, value]) => `export ${name}=${shellWord(value)}`);
  if (pathPrepend.length > 0) parts.push(`export PATH=${assemblePath(pathPrepend.map(shellWord), '"$PATH"')}`);
  return parts.join('; ');
}

/** The command of a process or step as a /bin/sh command line (a shell command stays one, run by sh -c). */
function commandLine(command: PlannedProcess['command']): string {
  return command.kind === 'exec' ? command.argv.map(shellWord).join(' ') : `/bin/sh -c ${shellWord(command.script)}`;
}

/** Shell statements writing a lowered file from literal text and variables of the container's environment. */
function writeFileStatements(file: LoweredFile): string[] {
  const { target } = file;
  const dir = target.slice(0, target.lastIndexOf('/'));
  const chunk = (c: LoweredChunk): string => {
    if ('text' in c) return `printf '%s' ${shellWord(c.text)}`;
    // The plan's schema allows `escape` in build-phase files only (written by runplan, in TypeScript, on every engine).
    const value = `\${${c.env}:-}`;
    if (c.part === 'before-first-colon') return `printf '%s' "${`\${${c.env}%%:*}`}"`;
    if (c.part === 'after-first-colon') return `case "${value}" in *:*) printf '%s' "${`\${${c.env}#*:}`}";; esac`;
    return `printf '%s' "${value}"`;
  };
  return [
    `mkdir -p ${shellWord(dir)}`,
    `( umask 077; { ${file.content.map(chunk).join('; ')}; } > ${shellWord(`${target}.tmp`)} )`,
    `chmod ${file.mode.toString(8)} ${shellWord(`${target}.tmp`)}`,
    `mv ${shellWord(`${target}.tmp`)} ${shellWord(target)}`,
  ];
}

function waitStatement(condition: Readiness): string {
  return `until ${readinessTest(condition)}; do sleep 0.25; done`;
}

/** Where an engine mounts secret files (Docker and Kubernetes convention): a file named like a secret variable sets it. */
const IMAGE_SECRETS_DIR = '/run/secrets';

/**
 * Statements that set each secret variable of the plan from ${IMAGE_SECRETS_DIR}/NAME
 * when the engine mounted that file (swarm secrets): the value then never is
 * in the service's specification. `$(cat)` drops trailing newlines, so the
 * value is read with a sentinel that is cut off afterwards.
 */
function secretFileStatements(plan: RunPlan): string[] {
  return plan.environment.variables
    .filter((v) => v.secret)
    .map((v) => `if [ -f ${IMAGE_SECRETS_DIR}/${v.name} ]; then ${v.name}="$(cat ${IMAGE_SECRETS_DIR}/${v.name}; printf x)"; ${v.name}="\${${v.name}%x}"; export ${v.name}; fi`);
}

/**
 * The image's entrypoint: `entrypoint [process] [args…]` starts one process of
 * the plan (web by default) as the plan says — run-phase files written from the
 * container's environment, its readiness conditions awaited, its environment and
 * PATH set, then exec'd (under tini when the image has it, so that signals reach
 * it as PID 1). Any other first argument is run as a command (`node -v`).
 *
 * `entrypoint --group MAIN HELPER…` starts processes that must share one
 * container (nginx waits on Puma's socket in ${RUN_DIR}, which does not cross
 * containers): the helpers in the background, then MAIN in the foreground, all
 * under `tini -g` so that a stop signal reaches every one of them.
 */
export function renderEntrypoint(lowered: LoweredPlan, digest: string, { hookTimeoutMs = DEFAULT_BUILD_STEP_TIMEOUT_MS }: { readonly hookTimeoutMs?: number } = {}): string {
  const { plan } = lowered;
  const runFiles = lowered.files.filter((f) => f.phase === 'run');
  const lines = [
    '#!/bin/sh',
    `# Generated by runplan ${plan.runplanVersion} from plan ${digest}: starts one process of the plan.`,
    `# Processes: ${plan.processes.map((p) => p.name).join(', ')} (default web). Anything else is run as a command.`,
    'set -eu',
    `mkdir -p ${IMAGE_BINDINGS.RUN_DIR}`,
    `export TMPDIR="\${TMPDIR:-/tmp}"`,
    ...secretFileStatements(plan),
    'init() { if [ "$$" = 1 ] && [ -x /usr/bin/tini ]; then echo /usr/bin/tini --; fi; }',
    'write_files() {',
    ...(runFiles.length > 0 ? runFiles.flatMap(writeFileStatements).map((l) => `  ${l}`) : ['  :']),
    '}',
    `refuse() { echo "${REFUSAL_PREFIX}$1: $2" >&2; exit 1; }`,
    ...preRunFunction(lowered.runHooks.preRun, hookTimeoutMs),
    ...outcomeHookBranch([...lowered.runHooks.succeeded, ...lowered.runHooks.failed]),
    'if [ "${1:-}" = --group ]; then',
    '  shift',
    '  if [ "$$" = 1 ] && [ -x /usr/bin/tini ]; then exec /usr/bin/tini -g -- "$0" --group "$@"; fi',
    '  main="$1"',
    '  shift',
    // The group's processes share one container: its pre-run hooks run once, before any of them.
    '  pre_run',
    '  for helper in "$@"; do RUNPLAN_PRE_RUN_DONE=1 "$0" "$helper" & done',
    '  RUNPLAN_PRE_RUN_DONE=1 exec "$0" "$main"',
    'fi',
    'process="${1:-web}"',
    '[ "$#" -gt 0 ] && shift',
    'case "$process" in',
  ];
  for (const proc of lowered.processes) {
    lines.push(`  ${shellWord(proc.name)})`);
    lines.push('    write_files');
    lines.push('    pre_run');
    for (const c of proc.startAfter ?? []) lines.push(`    ${waitStatement(c)}`);
    const setEnv = exportEnvironment(proc);
    lines.push(`    cd ${shellWord(proc.cwd)}`);
    if (setEnv) lines.push(`    ${setEnv}`);
    lines.push(`    exec $(init) ${commandLine(proc.command)} "$@"`);
    lines.push('    ;;');
  }
  // Any other command runs in the web process's environment (its PATH holds the plan's runtimes: `node -v`).
  const webEnv = lowered.web ? exportEnvironment(lowered.web) : '';
  lines.push('  *)', ...(webEnv ? [`    ${webEnv}`] : []), '    exec $(init) "$process" "$@"', '    ;;', 'esac', '');
  return lines.join('\n');
}

/** A lowered step as a shell command line: its directory, environment and PATH, then the command. */
export function stepScript(step: LoweredStep): string {
  if (step.run.kind === 'install') throw new Error('install steps are carried out into the build context');
  const setEnv = exportEnvironment(step);
  return `cd ${shellWord(step.cwd)}; ${setEnv ? `${setEnv}; ` : ''}${commandLine(step.run)}`;
}

/** A hook (a command step) as one shell statement: a subshell in its directory with its environment, failing with its coded error. */
function hookStatement(hook: LoweredStep): string | undefined {
  if (hook.run.kind === 'install') return undefined;
  const rule = hook.onFailure?.[0]?.error;
  const failure = `runplan: ${rule?.code ?? 'RUNPLAN_E_HOOK_FAILED'}: ${rule?.message ?? `hook ${hook.name} failed`}`;
  return `( ${stepScript(hook)} ) || { echo ${shellWord(failure)} >&2; exit 1; }`;
}

/**
 * `pre_run`: the plan's pre-run hooks (CC_PRE_RUN_HOOK), run before the
 * container's process starts, each in its directory with its environment and
 * bounded by the host's step timeout, as the local runner runs them
 * (src/engines/local/run-hooks.ts): GNU timeout stops the hook's whole process group, then
 * SIGKILL 5 s later. A failure is a refusal line (REFUSAL_PREFIX) with the code
 * the local runner raises — the hook's onFailure rule, or
 * RUNPLAN_E_BUILD_STEP_TIMEOUT — which the engine reads back from the
 * container's last lines to fail the deployment with it (refusal.ts). A group's
 * processes run them once.
 */
function preRunFunction(hooks: readonly LoweredStep[], timeoutMs: number): string[] {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const lines = ['pre_run() {', '  if [ -n "${RUNPLAN_PRE_RUN_DONE:-}" ]; then unset RUNPLAN_PRE_RUN_DONE; return 0; fi'];
  for (const hook of hooks) {
    if (hook.run.kind === 'install') continue;
    const rule = hook.onFailure?.[0]?.error;
    const failed = `${rule?.code ?? CoreErrors.HOOK_FAILED.code}: ${rule?.message ?? `hook ${hook.name} failed`}`;
    const timeout = stepTimeoutError(hook, seconds * 1000);
    const timedOut = `${timeout.code}: ${timeout.reason}`;
    lines.push(
      `  echo ${shellWord(`runplan: hook ${hook.name}: starting`)} >&2`,
      '  status=0',
      `  timeout -k 5 ${seconds} /bin/sh -c ${shellWord(stepScript(hook))} || status=$?`,
      // 124: timeout stopped it; 137: it outlived the TERM and was killed.
      `  case "$status" in 0) ;; 124|137) refuse ${refusalWords(timedOut)} ;; *) refuse ${refusalWords(failed)} ;; esac`,
    );
  }
  lines.push('  :', '}');
  return lines;
}

/** `CODE: message` as refuse()'s two arguments. */
function refusalWords(line: string): string {
  const colon = line.indexOf(': ');
  return `${shellWord(line.slice(0, colon))} ${shellWord(line.slice(colon + 2))}`;
}

/**
 * `entrypoint --hook NAME`: runs one run-succeeded or run-failed hook of the
 * plan (CC_RUN_SUCCEEDED_HOOK, CC_RUN_FAILED_HOOK) in a container of the image,
 * as an engine does once the outcome of a deployment is known.
 */
function outcomeHookBranch(hooks: readonly LoweredStep[]): string[] {
  const lines = ['if [ "${1:-}" = --hook ]; then', '  case "${2:-}" in'];
  for (const hook of hooks) {
    const statement = hookStatement(hook);
    if (statement !== undefined) lines.push(`    ${shellWord(hook.name)}) ${statement}; exit 0 ;;`);
  }
  lines.push('    *) echo "runplan: the plan has no run hook named ${2:-}" >&2; exit 2 ;;', '  esac', 'fi');
  return lines;
}

/** How the image's health check says a path answered another status than 200: renderHealthcheck prints it, the Swarm engine reads it back from the engine's health log. */
export const HEALTHCHECK_ANSWERED = /^healthcheck: GET (\S+) answered (\d{3}), not 200$/;

/**
 * The image's HEALTHCHECK command, the specification's rule: every configured
 * path must answer exactly 200 (redirects not followed); with none, the web port
 * must answer HTTP at all. `healthcheck PATH…` checks the paths given instead,
 * by the same rule, so that a manifest can show the paths its probes check
 * (a Kubernetes httpGet probe would accept any 2xx or 3xx).
 */
export function renderHealthcheck(plan: RunPlan): string {
  const hc = plan.healthCheck;
  const timeout = Math.max(1, Math.ceil(hc.requestTimeoutMs / 1000));
  const url = (path: string) => `"http://127.0.0.1:${hc.port}${path}"`;
  const lines = [
    '#!/bin/sh',
    '# Generated by runplan: the health check of the plan, for HEALTHCHECK and probes.',
    '# Usage: healthcheck [PATH...]  (default: the paths of the plan, or the port when it has none)',
    'set -u',
    'check_path() {',
    '  case "$1" in /*) ;; *) echo "healthcheck: not a path: $1" >&2; exit 2 ;; esac',
    // What it prints is what `docker inspect` and runplan's errors show of a failed check.
    `  code=$(curl -s -g -o /dev/null -w '%{http_code}' --max-time ${timeout} ${url('$1')}) || { echo "healthcheck: GET $1 got no answer within ${timeout} s (curl exit $?)"; exit 1; }`,
    '  [ "$code" = 200 ] || { echo "healthcheck: GET $1 answered $code, not 200"; exit 1; }',
    '}',
    'if [ "$#" -gt 0 ]; then',
    '  for path in "$@"; do check_path "$path"; done',
    '  exit 0',
    'fi',
  ];
  if (hc.kind === 'http') {
    for (const { path } of hc.paths) lines.push(`check_path ${shellWord(path)}`);
    lines.push('exit 0');
  } else {
    lines.push(`exec curl -s -o /dev/null --max-time ${timeout} ${shellWord(`http://127.0.0.1:${hc.port}/`)}`);
  }
  return `${lines.join('\n')}\n`;
}
