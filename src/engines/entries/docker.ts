/**
 * `runplan/engines/docker`: a plan carried out on a Docker engine. The plan
 * becomes an image on a stack image of its type (`buildImage`), and its processes
 * containers of it (`DockerExecutor`, which the root's `deploy()` drives as it
 * drives the local executor). `DockerCli` is the engine's client, which the
 * Swarm entry takes as well.
 *
 * @packageDocumentation
 */
export {
  DockerCli,
  /** Options of DockerCli.connect: which docker client, and which engine. */
  type DockerOptions,
  /** How a docker command ended: its exit code and output. */
  type DockerResult,
} from '../docker-cli.js';
export {
  deployToDocker,
  DockerExecutor,
  /** Options of deployToDocker and DockerExecutor: those of buildImage, and the clock and health checker of the deploy flow. */
  type DockerDeployOptions,
  /** A healthy deployment on a Docker engine: its image, its running containers and its health report. */
  type DockerDeployment,
} from '../docker-deploy.js';
export {
  buildImage,
  defaultImageTag,
  /** An image built from a plan (or only its build context, with `out`). */
  type BuiltImage,
  /** Options of buildImage: the planning options (or a saved plan), the image's name and base, and where the lines go. */
  type ImageOptions,
} from '../image/build-image.js';
export {
  ensureStackImage,
  /** The stack images by application type: the Debian packages each type's plans run with. */
  STACKS,
  stackForType,
  stackImageTag,
  type StackDefinition,
  /** Options of ensureStackImage. */
  type StackOptions,
} from '../stack-images.js';
