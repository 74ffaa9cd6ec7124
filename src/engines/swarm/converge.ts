import { CoreErrors } from '../../errors/core-errors.js';
import { formatSeconds } from '../../health/probes.js';
import type { PathResult } from '../../executor/contract.js';
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../time/clock.js';
import type { DockerCli } from '../docker-cli.js';
import { HEALTHCHECK_ANSWERED } from '../image/scripts.js';
import { TASK_SPEC_LABEL, type CurrentService } from './services.js';
import type { RunPlan } from '../../plan/schema.js';
import { refusalError, refusalIn } from '../../executor/refusal.js';

/** What runplan reads back from `docker service inspect`. */
export interface ServiceInfo extends CurrentService {
  readonly name: string;
  /** The state of the last update (null once a new update is accepted, until swarm starts it, and when it replaces no task). */
  readonly update: { readonly state: string; readonly message: string } | undefined;
}

interface InspectedService {
  Spec: {
    Name: string;
    Labels?: Record<string, string>;
    TaskTemplate: { ContainerSpec: { Secrets?: { SecretName: string }[]; Configs?: { ConfigName: string }[]; Sysctls?: Record<string, string> } };
    EndpointSpec?: { Ports?: { TargetPort: number }[] };
  };
  UpdateStatus?: { State?: string; Message?: string } | null;
}

export async function inspectService(docker: DockerCli, name: string): Promise<ServiceInfo | undefined> {
  const result = await docker.run(['service', 'inspect', name]);
  if (result.code !== 0) return undefined;
  const [service] = JSON.parse(result.stdout) as InspectedService[];
  if (!service) return undefined;
  const container = service.Spec.TaskTemplate.ContainerSpec;
  return {
    name: service.Spec.Name,
    labels: service.Spec.Labels ?? {},
    secrets: (container.Secrets ?? []).map((s) => s.SecretName),
    configs: (container.Configs ?? []).map((c) => c.ConfigName),
    publishedTargets: (service.Spec.EndpointSpec?.Ports ?? []).map((p) => p.TargetPort),
    sysctls: Object.keys(container.Sysctls ?? {}),
    update: service.UpdateStatus?.State ? { state: service.UpdateStatus.State, message: service.UpdateStatus.Message ?? '' } : undefined,
  };
}

interface InspectedTask {
  Status: { State: string; Err?: string };
  Spec: { ContainerSpec?: { Labels?: Record<string, string> } };
}

/** The tasks swarm wants running, with their state and the task specification they run. */
async function desiredTasks(docker: DockerCli, service: string): Promise<{ state: string; spec: string | undefined }[]> {
  const ids = (await docker.run(['service', 'ps', '--quiet', '--no-trunc', '--filter', 'desired-state=running', service])).stdout.split('\n').filter(Boolean);
  if (ids.length === 0) return [];
  const result = await docker.run(['inspect', ...ids]);
  // A task replaced between the two commands is gone: look again next round.
  if (result.code !== 0) return [{ state: 'unknown', spec: undefined }];
  return (JSON.parse(result.stdout) as InspectedTask[]).map((t) => ({ state: t.Status.State, spec: t.Spec.ContainerSpec?.Labels?.[TASK_SPEC_LABEL] }));
}

/** The last lines of a service's tasks (the order between tasks and streams is lost). */
async function serviceLogTail(docker: DockerCli, service: string, sinceMs: number): Promise<string[]> {
  // Since this wait began: an earlier deployment's tasks may have refused for a reason gone since.
  const logs = await docker.run(['service', 'logs', '--raw', '--tail', '5', '--since', String(Math.floor(sinceMs / 1000)), service]);
  return `${logs.stdout}\n${logs.stderr}`.split('\n').filter((l) => l !== '');
}

/** The last distinct task errors of a service (a task that exits, an image that cannot be found…), for messages. */
async function taskErrors(docker: DockerCli, service: string): Promise<string[]> {
  const lines = (await docker.run(['service', 'ps', '--no-trunc', '--format', '{{.Name}} {{.CurrentState}}: {{.Error}}', service])).stdout.split('\n');
  return [...new Set(lines.filter((l) => !/: $/.test(l) && l.trim() !== ''))].slice(0, 3);
}

interface ContainerHealth {
  Log?: { ExitCode: number; Output: string }[];
}

/**
 * What the last failed health checks of a service's containers said: a task
 * killed as unhealthy only says "unhealthy container", and the check's own
 * output (HTTP 500, a refused connection, an engine that cannot exec) is the cause.
 */
async function healthCheckFailures(docker: DockerCli, service: string): Promise<{ said: string[]; answers: PathResult[] }> {
  const ids = (await docker.run(['ps', '--all', '--quiet', '--filter', `label=com.docker.swarm.service.name=${service}`])).stdout.split('\n').filter(Boolean).slice(0, 5);
  if (ids.length === 0) return { said: [], answers: [] };
  const result = await docker.run(['inspect', '--format', '{{json .State.Health}}', ...ids]);
  const outputs = result.stdout.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    const failed = ((JSON.parse(line) as ContainerHealth).Log ?? []).filter((entry) => entry.ExitCode !== 0).pop();
    return failed ? [{ code: failed.ExitCode, last: failed.Output.trim().split('\n').pop()?.slice(0, 300) ?? '' }] : [];
  });
  const said = [...new Set(outputs.map((o) => `health check exited ${o.code}: ${o.last}`))].slice(0, 2);
  return { said, answers: pathAnswers(outputs.map((o) => o.last)) };
}

/** The paths the failed checks found answering another status than 200, once each: what runplan's own gate would have reported. */
export function pathAnswers(lines: readonly string[]): PathResult[] {
  const answers = new Map<string, PathResult>();
  for (const line of lines) {
    const match = HEALTHCHECK_ANSWERED.exec(line);
    if (match) answers.set(match[1] as string, { path: match[1] as string, status: Number(match[2]), ok: false });
  }
  return [...answers.values()];
}

const FAILED = new Set(['paused', 'rollback_paused', 'rollback_completed']);

export interface WaitOptions {
  readonly replicas: number;
  /** The task specification every running task must carry. */
  readonly taskSpec: string;
  /** The service was just updated: its update status decides (a stale one from an earlier deployment must not). */
  readonly updated: boolean;
  /** On `clock`: when to give up. */
  readonly deadline: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
  /**
   * The plan of the service's processes: a task whose entrypoint refused to start
   * its process (a pre-run hook failed, refusal.ts) fails the wait at once with the
   * local runner's error, instead of being restarted until the deadline.
   */
  readonly plan?: RunPlan;
}

/**
 * Waits until the service runs exactly `replicas` tasks, all of them running
 * (swarm counts a task with a HEALTHCHECK as running once healthy) with the new
 * task specification, and, after an update, until swarm calls the update
 * completed (it watches each new task for --update-monitor first). A rolled-back
 * or paused update, or the deadline, is RUNPLAN_E_SWARM_NOT_CONVERGED.
 */
export async function waitForService(docker: DockerCli, service: string, options: WaitOptions): Promise<void> {
  const { clock } = options;
  const started = clock.now();
  let last = '';
  const fail = async (why: string) => {
    const health = await healthCheckFailures(docker, service);
    const errors = [...(await taskErrors(docker, service)), ...health.said];
    return CoreErrors.SWARM_NOT_CONVERGED.create({
      message: `${service}: ${why}${errors.length > 0 ? `; tasks: ${errors.join('; ')}` : ''}.`,
      // What the image's health check found (a path answering 500): the Swarm release reports it as the gate's.
      details: { service, healthAnswers: health.answers },
    });
  };
  for (let round = 0; ; round++) {
    if (options.signal?.aborted) throw options.signal.reason;
    const info = options.updated ? await inspectService(docker, service) : undefined;
    const update = info?.update;
    if (update && FAILED.has(update.state)) {
      const said = update.message && update.message !== update.state.replace('_', ' ') ? ` (${update.message})` : '';
      throw await fail(
        update.state === 'rollback_completed' ? `the update failed and swarm rolled it back, the previous version serves${said}` : `the update is ${update.state.replace('_', ' ')}${said}`,
      );
    }
    const tasks = await desiredTasks(docker, service);
    const current = tasks.filter((t) => t.state === 'running' && t.spec === options.taskSpec).length;
    const rolling = update?.state === 'updating' || update?.state === 'rollback_started';
    const progress = update?.state === 'rollback_started' ? 'rolling back' : `${current} of ${options.replicas} task(s) running as planned`;
    if (progress !== last) {
      options.logger.info(`${service}: ${progress}`);
      last = progress;
    }
    if (current === options.replicas && tasks.length === options.replicas && !rolling) {
      options.logger.info(`${service}: converged in ${formatSeconds(clock.now() - started)}`);
      return;
    }
    // Every 2 s while not converged: the tasks' last lines (a refusal is the last a task says).
    if (options.plan && round % 4 === 3) {
      const refusal = refusalIn(await serviceLogTail(docker, service, started));
      if (refusal) throw refusalError(refusal, options.plan);
    }
    if (clock.now() > options.deadline) throw await fail(`not converged after ${formatSeconds(clock.now() - started)} (${progress})`);
    await clock.sleep(500, options.signal);
  }
}
