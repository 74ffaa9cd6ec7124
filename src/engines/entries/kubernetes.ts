/**
 * `runplan/engines/kubernetes`: a plan written as Kubernetes manifests
 * (Deployments, a Service, a Secret), with its image built or given.
 *
 * @packageDocumentation
 */
export {
  exportToKubernetes,
  /** What exportToKubernetes wrote: the plan, its image, the manifests and their files. */
  type KubernetesExport,
  /** Options of exportToKubernetes: those of buildImage (or an image already built), where the manifests go, their namespace and replicas. */
  type KubernetesExportOptions,
} from '../kubernetes-export.js';
import type { RunPlan } from '../../plan/schema.js';
import { lowerForImage } from '../image/scripts.js';
import { type KubernetesManifests, type KubernetesOptions, manifestsOfLowered } from '../kubernetes.js';

/**
 * The manifests of a plan: a Deployment per group of processes, the web
 * Service, the Secret of its secret variables — from the plan lowered once as
 * its image lowers it, as every engine maps a lowered plan.
 */
export function kubernetesManifests(plan: RunPlan, options: KubernetesOptions): KubernetesManifests {
  return manifestsOfLowered(lowerForImage(plan), options);
}
export type {
  /** A Kubernetes object as runplan writes it. */
  K8sObject,
  /** The manifests of a plan (kubernetesManifests), and what of the plan they cannot honour. */
  KubernetesManifests,
  KubernetesOptions,
} from '../kubernetes.js';
export {
  deployToPodman,
  PodmanKubeExecutor,
  /** What `podman kube play` cannot honour of the Kubernetes mapping, and why. */
  PODMAN_KUBE_UNHONOURED,
  /** Options of deployToPodman and PodmanKubeExecutor: those of buildImage, the podman to use, the clock and health checker of the deploy flow. */
  type PodmanKubeOptions,
  /** A healthy deployment played by podman: its image, its running containers and its health report. */
  type PodmanKubeDeployment,
} from '../podman-kube.js';
export { PodmanCli } from '../podman-cli.js';
