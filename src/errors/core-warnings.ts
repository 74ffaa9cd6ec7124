import { defineWarnings } from './warnings.js';

/** Warning codes of the runplan core (buildpacks declare their own). */
export const CoreWarnings = defineWarnings({
  HOOK_FAILED: {
    title: 'A run-succeeded or run-failed hook failed',
    fix: "Read the hook's output in the deployment log and fix its command (CC_RUN_SUCCEEDED_HOOK or CC_RUN_FAILED_HOOK); the deployment's outcome does not depend on it.",
  },
  K8S_WORKER_RESTART: {
    title: 'A worker restart policy that a Kubernetes Deployment cannot honour',
    fix: 'Kubernetes restarts the containers of a Deployment always: set CC_WORKER_RESTART=always, or run such a worker as a Job of your own.',
  },
});
