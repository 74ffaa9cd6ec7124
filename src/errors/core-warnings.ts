import { defineWarnings } from './warnings.js';

/** Warning codes of the runplan core (buildpacks declare their own). */
export const CoreWarnings = defineWarnings({
  HOOK_FAILED: {
    title: 'A run-succeeded or run-failed hook failed',
    fix: "Read the hook's output in the deployment log and fix its command (CC_RUN_SUCCEEDED_HOOK or CC_RUN_FAILED_HOOK); the deployment's outcome does not depend on it.",
  },
  SSH_TRUST_ON_FIRST_USE: {
    title: 'An SSH host key is trusted on first use',
    fix: "Give the git servers' host keys explicitly, checked against the fingerprints their operators publish: CC_SSH_KNOWN_HOSTS (one `ssh-keyscan -p PORT HOST` line per server) or the host's known hosts file (--ssh-known-hosts FILE, RUNPLAN_SSH_KNOWN_HOSTS).",
  },
  SSH_KEY_MISSING: {
    title: 'Git dependencies are fetched over SSH, but no SSH key is given',
    fix: 'Set CC_SSH_PRIVATE_KEY to a private key (without passphrase) that the git servers accept, e.g. a read-only deploy key.',
  },
  K8S_WORKER_RESTART: {
    title: 'A worker restart policy that a Kubernetes Deployment cannot honour',
    fix: 'Kubernetes restarts the containers of a Deployment always: set CC_WORKER_RESTART=always, or run such a worker as a Job of your own.',
  },
});
