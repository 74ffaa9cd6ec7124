import { decide } from '../plan/decide.js';
import { CoreErrors } from '../errors/core-errors.js';
import { failureRule } from '../plan/failure-rule.js';
import type { BuildStep, Decision, RunHooks } from '../plan/schema.js';

/** The environment overrides and PATH a command of the application runs with (the buildpack's, or the web process's). */
export interface UserCommandEnvironment {
  readonly env: Readonly<Record<string, string>>;
  readonly pathPrepend: readonly string[];
}

/** Where the build hooks go among a buildpack's steps (PlanContribution.hookPoints). */
export interface HookPoints {
  readonly dependencies?: string;
  readonly checks?: string;
}

type HookId = 'pre-build' | 'post-build' | 'pre-run' | 'run-succeeded' | 'run-failed';

interface HookRule {
  readonly id: HookId;
  readonly variable: string;
  readonly when: string;
  /** A failure fails the deployment; otherwise it is only a warning. */
  readonly fatal: boolean;
}

/** The service's hooks, in the order they run. */
const HOOKS: readonly HookRule[] = [
  { id: 'pre-build', variable: 'CC_PRE_BUILD_HOOK', when: 'before the dependencies are installed', fatal: true },
  { id: 'post-build', variable: 'CC_POST_BUILD_HOOK', when: 'after the build', fatal: true },
  { id: 'pre-run', variable: 'CC_PRE_RUN_HOOK', when: 'before the processes start', fatal: true },
  { id: 'run-succeeded', variable: 'CC_RUN_SUCCEEDED_HOOK', when: 'once the deployment succeeded (healthy)', fatal: false },
  { id: 'run-failed', variable: 'CC_RUN_FAILED_HOOK', when: 'once the deployment failed after its build', fatal: false },
];

export interface ResolvedHooks {
  /** The buildpack's build steps with the build hooks in place. */
  readonly steps: BuildStep[];
  /** Absent when no run-phase hook is set (the plan then has no runHooks). */
  readonly runHooks?: RunHooks;
  readonly decisions: Decision[];
}

/**
 * The hooks the application set (`CC_*_HOOK`, an empty value counting as unset),
 * each as a shell step of the plan with a decision saying where it came from:
 * build hooks among the buildpack's steps at its hook points, run-phase hooks in
 * the plan's runHooks. Pure: the variables and the steps in, the plan's parts out.
 */
export function resolveHooks(
  variables: ReadonlyMap<string, string>,
  steps: readonly BuildStep[],
  points: HookPoints,
  commands: UserCommandEnvironment,
  buildCommands: UserCommandEnvironment = commands,
): ResolvedHooks {
  const decisions: Decision[] = [];
  const hookStep = (rule: HookRule): BuildStep | undefined => {
    const script = variables.get(rule.variable);
    if (script === undefined || script.trim() === '') return undefined;
    // Build hooks run as the build's steps do (sized for the build instance); run-phase hooks as the processes.
    const given = rule.id === 'pre-build' || rule.id === 'post-build' ? buildCommands : commands;
    return {
      name: `${rule.id}-hook`,
      description: `${rule.variable}: the application's command, run ${rule.when}`,
      run: { kind: 'shell', script },
      cwd: '.',
      env: { ...given.env },
      pathPrepend: [...given.pathPrepend],
      layer: null,
      onFailure: [
        failureRule(
          CoreErrors.HOOK_FAILED,
          { kind: 'any' },
          {
            message: `the ${rule.id} hook (${rule.variable}, run ${rule.when}) failed; its output is above.${rule.fatal ? '' : ' It does not change the outcome of the deployment.'}`,
            variable: rule.variable,
          },
        ),
      ],
    };
  };
  const byId = new Map(HOOKS.map((rule) => [rule.id, { rule, step: hookStep(rule) }]));
  const hook = (id: HookId) => byId.get(id) as { rule: HookRule; step: BuildStep | undefined };

  const index = (name: string | undefined, fallback: number, what: string): number => {
    if (name === undefined) return fallback;
    const i = steps.findIndex((s) => s.name === name);
    if (i < 0) throw CoreErrors.PLAN_INVALID.create({ message: `the buildpack puts the hooks ${what} step "${name}", which is not one of its steps.` });
    return i;
  };
  const before = index(points.dependencies, 0, 'before');
  const checks = index(points.checks, steps.length, 'after the build, before');
  const pre = hook('pre-build');
  const post = hook('post-build');
  const merged = [...steps.slice(0, before), ...(pre.step ? [pre.step] : []), ...steps.slice(before, checks), ...(post.step ? [post.step] : []), ...steps.slice(checks)];
  const neighbour = (i: number, side: 'before' | 'after') => {
    const step = side === 'before' ? steps[i] : steps[i - 1];
    return step ? `${side} step "${step.name}"` : side === 'before' ? 'first' : 'last';
  };
  if (pre.step) {
    decisions.push(
      decision(
        pre.rule,
        pre.step,
        `build step "${pre.step.name}", ${neighbour(before, 'before')}`,
        'the service runs it before the dependencies are installed, once the runtime and tools are in place, in the application folder with its environment; a failure fails the deployment',
      ),
    );
  }
  if (post.step) {
    const after = checks > 0 ? neighbour(checks, 'after') : 'first';
    decisions.push(
      decision(
        post.rule,
        post.step,
        `build step "${post.step.name}", ${after}${checks < steps.length ? ` (${neighbour(checks, 'before')}, which checks the build)` : ''}`,
        'the service runs it after the build, in the application folder with its environment; a failure fails the deployment',
      ),
    );
  }

  const preRun = hook('pre-run');
  const succeeded = hook('run-succeeded');
  const failed = hook('run-failed');
  if (preRun.step)
    decisions.push(
      decision(
        preRun.rule,
        preRun.step,
        `run hook "${preRun.step.name}" (runHooks.preRun)`,
        'run in the built application before its processes start, each time they are started; a failure fails the deployment and no process starts',
      ),
    );
  if (succeeded.step)
    decisions.push(
      decision(
        succeeded.rule,
        succeeded.step,
        `run hook "${succeeded.step.name}" (runHooks.succeeded)`,
        'run once the health check passed; it never changes the outcome, a failure is reported as a warning',
      ),
    );
  if (failed.step) {
    decisions.push(
      decision(
        failed.rule,
        failed.step,
        `run hook "${failed.step.name}" (runHooks.failed)`,
        'run when the deployment failed after its build (a pre-run hook or a process could not start, or the health check failed), once its processes are stopped; it never changes the outcome, a failure is reported as a warning',
      ),
    );
  }
  const anyRun = preRun.step ?? succeeded.step ?? failed.step;
  return {
    steps: merged,
    ...(anyRun
      ? {
          runHooks: {
            preRun: preRun.step ? [preRun.step] : [],
            succeeded: succeeded.step ? [succeeded.step] : [],
            failed: failed.step ? [failed.step] : [],
          },
        }
      : {}),
    decisions,
  };
}

function decision(rule: HookRule, step: BuildStep, resolved: string, reason: string): Decision {
  return decide({
    id: `hooks.${rule.id}`,
    subject: `${rule.id.replace('-', ' ')} hook`,
    requests: [{ source: `env ${rule.variable}`, value: step.run.kind === 'shell' ? step.run.script : null }],
    resolved,
    reason,
  });
}
