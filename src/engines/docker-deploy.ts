import type { HealthChecker, HealthReport, RunningApp } from '../buildpack/contract.js';
import { healthError, redactError } from '../deploy/deploy.js';
import { CoreErrors } from '../errors/core-errors.js';
import { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import { DockerCli } from './docker-cli.js';
import { checkContainerHealth, DockerRunner, portAnswers, runImageOutcomeHooks } from './docker-runner.js';
import { buildImage, type BuiltImage, type ImageOptions } from './image/build-image.js';

export interface DockerDeployOptions extends Omit<ImageOptions, 'out' | 'oci'> {
  readonly clock?: Clock;
  readonly healthChecker?: HealthChecker;
}

export interface DockerDeployment extends BuiltImage {
  readonly running: RunningApp;
  readonly health: HealthReport;
  stop(): Promise<void>;
}

/**
 * `runplan run --runner docker`: the plan as an image, its processes as
 * containers, the same health check and log lines as the local runner. A
 * failed health check stops and removes every container it started.
 */
export async function deployToDocker(options: DockerDeployOptions): Promise<DockerDeployment> {
  const docker = options.docker ?? (await DockerCli.connect());
  const built = await buildImage({ ...options, docker });
  const logger = new Logger(options.sink, built.environment.redactor);
  const { port } = built.plan.healthCheck;
  if (await portAnswers(port)) {
    throw CoreErrors.RUN_PORT_IN_USE.create({ message: `port ${port} already answers on 127.0.0.1 before the application has started.`, details: { port } });
  }
  const image = built.tag as string;
  // CC_RUN_FAILED_HOOK once everything started is stopped; it cannot change the outcome.
  const fail = async (error: unknown, running?: RunningApp): Promise<never> => {
    await running?.stop();
    await runImageOutcomeHooks(docker, image, built.plan, built.environment, 'failed', logger);
    throw redactError(error, built.environment.redactor);
  };
  const running = await new DockerRunner({ docker, image }).start({ plan: built.plan, appDir: options.appDir, env: built.environment, logger }).catch((error: unknown) => fail(error));
  let health: HealthReport;
  try {
    health = await checkContainerHealth(built.plan, logger, {
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.healthChecker ? { healthChecker: options.healthChecker } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    return fail(error, running);
  }
  if (!health.ok) return fail(healthError(health), running);
  await runImageOutcomeHooks(docker, image, built.plan, built.environment, 'succeeded', logger);
  return { ...built, running, health, stop: () => running.stop() };
}
