import { randomBytes } from 'node:crypto';
import type { HealthTarget, Runner, RunningApp, RunOptions } from '../executor/contract.js';
import type { Environment } from '../env/assemble.js';
import { probeHttp } from '../health/probes.js';
import type { Logger } from '../log/logger.js';
import type { RestartPolicy, RunPlan } from '../plan/schema.js';
import type { DockerCli } from './docker-cli.js';
import { CoreErrors } from '../errors/core-errors.js';
import { explainFailure, stepTimeoutError } from '../steps/command-step.js';
import type { LoweredStep } from '../lowering/lower.js';
import { describeStep } from '../plan/describe.js';
import { IMAGE_BINDINGS } from './image/scripts.js';
import { ContainerExits, type ContainerEvent } from './container-exits.js';
import type { EngineCli } from './engine-cli.js';

/** Labels on everything runplan creates in an engine; only what carries them is ever removed. */
export const MANAGED_LABEL = 'io.runplan.managed';
export const DEPLOYMENT_LABEL = 'io.runplan.deployment';
export const PROCESS_LABEL = 'io.runplan.process';

const RESTART: Readonly<Record<RestartPolicy['policy'], string>> = { always: 'always', 'on-failure': 'on-failure', never: 'no' };

/**
 * Docker's `--restart` for a process: the same condition. Docker has no restart
 * delay of its own (it waits 100 ms, doubling up to a minute, between restarts),
 * so a worker's CC_WORKER_RESTART_DELAY is not honoured there (docs/engines.md).
 */
export function dockerRestart(restart: RestartPolicy): string {
  return RESTART[restart.policy] ?? 'no';
}

/** The secret variables of the plan, with their values, for the engine (never on a command line). */
export function secretVariables(plan: RunPlan, env: Environment): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of plan.environment.variables) {
    const value = env.get(v.name);
    if (v.secret && value !== undefined) out[v.name] = value;
  }
  return out;
}

export interface DockerRunnerOptions {
  readonly docker: DockerCli;
  /** The application image (`runplan image`). */
  readonly image: string;
}

/**
 * Runs a plan's processes as containers of its image, one per process, with the
 * entrypoint starting each by name: the web container published on 127.0.0.1
 * only, all sharing a volume at ${RUN_DIR} (nginx reaches Puma's socket there),
 * secret values given to the docker CLI's environment and passed by name
 * (`-e NAME`), restart policy from the plan, stop with SIGTERM then SIGKILL after
 * the plan's grace period. Every container and volume carries runplan's labels
 * and the deployment's id; stop() removes exactly those.
 */
export class DockerRunner implements Runner {
  constructor(private readonly options: DockerRunnerOptions) {}

  async start({ plan, env, logger }: RunOptions): Promise<RunningApp> {
    const { docker, image } = this.options;
    const id = `rp-${randomBytes(4).toString('hex')}`;
    const labels = [MANAGED_LABEL, 'true', DEPLOYMENT_LABEL, id, 'io.runplan.plan-digest', await imageDigest(docker, image)];
    const labelArgs = (extra: string[] = []) => {
      const pairs = [...labels, ...extra];
      const out: string[] = [];
      for (let i = 0; i < pairs.length; i += 2) out.push('--label', `${pairs[i]}=${pairs[i + 1]}`);
      return out;
    };
    const volume = `${id}-run`;
    const containers: { name: string; process: string }[] = [];
    const logs: AbortController[] = [];
    let stopped: Promise<void> | undefined;
    const stop = () =>
      (stopped ??= (async () => {
        const names = containers.map((c) => c.name);
        if (names.length > 0) {
          const grace = Math.max(...plan.processes.map((p) => Math.ceil(p.stopGraceMs / 1000)));
          logger.info(`stopping ${names.join(', ')} (SIGTERM, then SIGKILL after ${grace} s)`);
          await docker.run(['stop', '-t', String(grace), ...names]);
        }
        for (const l of logs) l.abort();
        const left = (await docker.run(['ps', '-aq', '--filter', `label=${DEPLOYMENT_LABEL}=${id}`])).stdout.split('\n').filter(Boolean);
        if (left.length > 0) await docker.run(['rm', '-f', '-v', ...left]);
        await docker.run(['volume', 'rm', '-f', volume]);
      })());

    const secrets = secretVariables(plan, env);
    // Exits are told by the engine's events, followed before any container starts so that none is missed.
    const exits = new ContainerExits(docker, plan, logger, 'Docker restarts it with its own back-off, 100 ms doubling up to 1 min');
    logs.push(followDockerExits(docker, exits, id));
    try {
      await docker.ok(['volume', 'create', ...labelArgs(), volume]);
      for (const proc of plan.processes) {
        const name = `${id}-${proc.name}`;
        const args = [
          'run',
          '--detach',
          '--name',
          name,
          ...labelArgs([PROCESS_LABEL, proc.name]),
          '--restart',
          dockerRestart(proc.restart),
          '--stop-timeout',
          String(Math.ceil(proc.stopGraceMs / 1000)),
          '--volume',
          `${volume}:${IMAGE_BINDINGS.RUN_DIR}`,
          ...Object.keys(secrets).flatMap((n) => ['--env', n]),
          ...(proc.role === 'web' && proc.port ? ['--publish', `127.0.0.1:${proc.port}:${proc.port}`] : []),
          image,
          proc.name,
        ];
        await docker.ok(args, { env: secrets });
        containers.push({ name, process: proc.name });
        logger.info(`started ${proc.name} (container ${name})`);
        const follow = new AbortController();
        logs.push(follow);
        void docker.stream(['logs', '--follow', name], (line, stream) => logger.emit({ kind: 'process', name: proc.name, stream }, line, stream === 'stderr' ? 'warn' : 'info'), {
          signal: follow.signal,
        });
      }
    } catch (error) {
      exits.stopping = true;
      await stop();
      throw error;
    }

    return {
      processes: () => plan.processes.map((p) => ({ name: p.name, pid: undefined, restarts: exits.restartsOf(p.name), running: !exits.stopping && exits.runningOf(p.name) })),
      stop: async () => {
        exits.stopping = true;
        await stop();
      },
      onExit: (listener) => exits.listen(listener),
    };
  }
}

interface EngineEvent {
  readonly Action?: string;
  readonly status?: string;
  readonly timeNano?: number;
  readonly Actor?: { readonly Attributes?: Readonly<Record<string, string>> };
}

/** A line of `docker events --format '{{json .}}'` as a container's start or exit. */
function dockerEvent(line: string): ContainerEvent | undefined {
  let event: EngineEvent;
  try {
    event = JSON.parse(line) as EngineEvent;
  } catch {
    return undefined;
  }
  const attributes = event.Actor?.Attributes ?? {};
  const action = event.Action ?? event.status;
  const process = attributes[PROCESS_LABEL];
  if (process === undefined || (action !== 'start' && action !== 'die')) return undefined;
  const exitCode = Number(attributes.exitCode ?? 'NaN');
  return { process, container: attributes.name, action, timeNs: event.timeNano, exitCode: Number.isInteger(exitCode) ? exitCode : undefined };
}

/** The exits of a deployment's containers, from `docker events` (`die` and `start`). */
function followDockerExits(docker: DockerCli, exits: ContainerExits, deployment: string): AbortController {
  const controller = new AbortController();
  const args = ['events', '--format', '{{json .}}', '--filter', 'type=container', '--filter', `label=${DEPLOYMENT_LABEL}=${deployment}`, '--filter', 'event=start', '--filter', 'event=die'];
  void docker.stream(
    args,
    (line) => {
      const event = dockerEvent(line);
      if (event) void exits.seen(event);
    },
    { signal: controller.signal },
  );
  return controller;
}

/**
 * One run-succeeded or run-failed hook of a deployment in containers: in a
 * throw-away container of the image (`entrypoint --hook NAME`), with the plan's
 * environment and secrets, removed with everything it runs when it outlives
 * `timeoutMs` or the deployment is interrupted. Rejects with the hook's coded
 * error as the local runner does (the deploy flow warns of it).
 */
export async function runImageHook(
  engine: EngineCli,
  image: string,
  plan: RunPlan,
  env: Environment,
  hook: LoweredStep,
  logger: Logger,
  bounds: { readonly timeoutMs: number; readonly signal?: AbortSignal | undefined; readonly runArgs?: readonly string[] },
): Promise<void> {
  const secrets = secretVariables(plan, env);
  logger.info(`hook ${hook.name}: ${describeStep(hook)} (in a container of ${image})`);
  // Named, so that the step timeout (or an interruption) can remove it with everything it runs.
  const container = `rp-hook-${randomBytes(4).toString('hex')}`;
  const args = ['run', '--rm', '--name', container, '--label', `${MANAGED_LABEL}=true`, ...(bounds.runArgs ?? []), ...Object.keys(secrets).flatMap((n) => ['--env', n]), image, '--hook', hook.name];
  let stopped: 'timeout' | 'interrupted' | undefined;
  const stop = (why: 'timeout' | 'interrupted') => {
    stopped ??= why;
    void engine.run(['rm', '--force', container]);
  };
  const timer = setTimeout(() => stop('timeout'), bounds.timeoutMs);
  const interrupt = () => stop('interrupted');
  bounds.signal?.addEventListener('abort', interrupt, { once: true });
  const code = await engine.stream(args, (line, stream) => logger.emit({ kind: 'step', name: hook.name, stream }, line, stream === 'stderr' ? 'warn' : 'info'), { env: secrets }).catch(() => -1);
  clearTimeout(timer);
  bounds.signal?.removeEventListener('abort', interrupt);
  if (stopped === 'timeout') throw stepTimeoutError(hook, bounds.timeoutMs);
  if (stopped === 'interrupted') throw CoreErrors.BUILD_INTERRUPTED.create({ message: `the deployment was interrupted during hook "${hook.name}".`, details: { step: hook.name } });
  if (code !== 0) {
    throw (
      explainFailure(hook, { notFound: false, exitCode: code, output: [] }) ??
      CoreErrors.HOOK_FAILED.create({ message: `hook ${hook.name} failed with exit status ${code}.`, details: { step: hook.name, exitCode: code } })
    );
  }
}

async function imageDigest(docker: DockerCli, image: string): Promise<string> {
  const label = (await docker.run(['image', 'inspect', '--format', '{{index .Config.Labels "io.runplan.plan-digest"}}', image])).stdout.trim();
  return label || 'unknown';
}

/**
 * Where a deployment in containers is health-checked: the published port on
 * 127.0.0.1. docker-proxy accepts connections before the application listens,
 * so "the port accepts connections" is told by an HTTP answer.
 */
export function containerHealthTarget(plan: RunPlan, publishedPort = plan.healthCheck.port): HealthTarget {
  return { baseUrl: `http://127.0.0.1:${publishedPort}`, check: plan.healthCheck, portProbe: 'http' };
}

/** Whether anything answers HTTP on the web port already (another program would answer the health check). */
export async function portAnswers(port: number): Promise<boolean> {
  return 'status' in (await probeHttp(new URL(`http://127.0.0.1:${port}/`), 1_000));
}
