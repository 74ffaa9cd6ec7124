import type { HealthChecker, HealthReport, HealthTarget, RunningApp } from '../executor/contract.js';
import type { Built, Executor, ExecutorBuildOptions, ExecutorStartOptions, HookRunOptions } from '../executor/contract.js';
import type { LoweredStep } from '../lowering/lower.js';
import { deploy } from '../executor/deploy-flow.js';
import type { LogSink } from '../log/logger.js';
import type { PlanWarning, RunPlan } from '../plan/schema.js';
import { unhonouredRestartDelays } from './restart-delays.js';
import { processesApart } from '../lowering/process-groups.js';
import { planToCarryOut, type PlanToCarryOut } from '../planning/plan-to-carry-out.js';
import type { Clock } from '../time/clock.js';
import { DockerCli } from './docker-cli.js';
import { containerHealthTarget, DockerRunner, portAnswers, runImageHook } from './docker-runner.js';
import { buildImage, type BuiltImage, type ImageOptions } from './image/build-image.js';

export interface DockerDeployOptions extends Omit<ImageOptions, 'out' | 'oci'> {
  /** Where the deployment's lines go: the deploy flow's logger writes them, the image build's included. */
  readonly sink: LogSink;
  readonly clock?: Clock;
  readonly healthChecker?: HealthChecker;
}

export interface DockerDeployment extends BuiltImage {
  readonly running: RunningApp;
  readonly health: HealthReport;
  stop(): Promise<void>;
}

type DockerBuild = BuiltImage & Built & { readonly docker: DockerCli; readonly image: string };

/**
 * `runplan run --runner docker`: the one deploy flow with the Docker executor.
 * A failed deployment stops and removes every container it started.
 */
export async function deployToDocker(options: DockerDeployOptions): Promise<DockerDeployment> {
  const { built, running, health } = await deploy(await planToCarryOut(options), new DockerExecutor(options), options);
  const { docker: _docker, image: _image, logger: _logger, ...image } = built;
  return { ...image, running, health, stop: () => running.stop() };
}

/**
 * A Docker engine as an executor: the plan built as an image, its processes as
 * containers of it (DockerRunner), the health check on the published port —
 * "accepts connections" told by an HTTP answer, since docker-proxy accepts
 * connections before the application listens — and the outcome hooks in
 * throw-away containers. The image stays whatever the outcome: accepting or
 * discarding a deployment changes nothing in the engine but its containers.
 */
export class DockerExecutor implements Executor<DockerBuild> {
  readonly name = 'docker';

  constructor(private readonly options: Omit<DockerDeployOptions, 'sink'>) {}

  async build(toCarryOut: PlanToCarryOut, { signal, logger }: ExecutorBuildOptions): Promise<DockerBuild> {
    const docker = this.options.docker ?? (await DockerCli.connect());
    const built = await buildImage({ ...this.options, docker, logger, ...(signal ? { signal } : {}) }, toCarryOut);
    return { ...built, docker, image: built.tag as string, logger };
  }

  unhonoured(plan: RunPlan): PlanWarning[] {
    return [...processesApart(plan, 'Docker', 'processes'), ...unhonouredRestartDelays(plan, 'Docker', 'its own back-off (100 ms, doubling up to 1 min)')];
  }

  portInUse(built: DockerBuild): Promise<boolean> {
    return portAnswers(built.plan.healthCheck.port);
  }

  start(built: DockerBuild, { signal }: ExecutorStartOptions): Promise<RunningApp> {
    return new DockerRunner({ docker: built.docker, image: built.image }).start({
      plan: built.plan,
      appDir: this.options.appDir,
      env: built.environment,
      logger: built.logger,
      ...(signal ? { signal } : {}),
    });
  }

  healthTarget(built: DockerBuild): HealthTarget {
    return containerHealthTarget(built.plan);
  }

  runHook(built: DockerBuild, hook: LoweredStep, { signal, timeoutMs }: HookRunOptions): Promise<void> {
    return runImageHook(built.docker, built.image, built.plan, built.environment, hook, built.logger, { timeoutMs, signal });
  }

  async accept(): Promise<{ settled: Promise<void> }> {
    return { settled: Promise.resolve() };
  }

  async discard(): Promise<void> {}
}
