import { defineWarnings } from './warnings.js';

/** Warning codes of the runplan core (buildpacks declare their own). */
export const CoreWarnings = defineWarnings({
  HOOK_FAILED: {
    title: 'A run-succeeded or run-failed hook failed',
    fix: "Read the hook's output in the deployment log and fix its command (CC_RUN_SUCCEEDED_HOOK or CC_RUN_FAILED_HOOK); the deployment's outcome does not depend on it.",
  },
  RUN_CRASH_LOOP: {
    title: 'A process is crash-looping',
    fix: "Read the process's output above the warning and fix what makes it exit (its command: CC_WORKER_COMMAND…, CC_RUN_COMMAND). runplan keeps restarting it as its policy says, but spaces the restarts out (100 ms doubling up to 10 s, or the plan's delay when longer) until it stays up.",
  },
  RUN_MEMORY_LIMIT: {
    title: 'A process was killed for using more memory than its instance has',
    fix: "Make the application use less memory (a leak, a cache without bound, too many workers or threads), or give it a larger instance. The limit holds for all of the application's processes together; runplan restarts the process as its policy says.",
  },
  RUN_PROCESS_LIMIT: {
    title: 'An application reached its limit of processes',
    fix: 'Find what starts so many processes or threads (a fork loop, a pool without bound) and bound it; the limit follows the instance size, and new processes and threads are refused while it is reached.',
  },
  RUN_DISK_LIMIT: {
    title: "The application's disk is full",
    fix: "Find what the application writes without bound (uploads kept on its own disk, a log file, a cache) and remove or bound it: keep files in an add-on (object storage, a database). Or give it a larger disk (the host's diskMb setting). Writes fail with ENOSPC (no space left on device) until room is made.",
  },
  SSH_TRUST_ON_FIRST_USE: {
    title: 'An SSH host key is trusted on first use',
    fix: "Give the git servers' host keys explicitly, checked against the fingerprints their operators publish: CC_SSH_KNOWN_HOSTS (one `ssh-keyscan -p PORT HOST` line per server) or the host's known hosts file (--ssh-known-hosts FILE, RUNPLAN_SSH_KNOWN_HOSTS).",
  },
  SSH_KEY_MISSING: {
    title: 'Git dependencies are fetched over SSH, but no SSH key is given',
    fix: 'Set CC_SSH_PRIVATE_KEY to a private key (without passphrase) that the git servers accept, e.g. a read-only deploy key.',
  },
  PROCFILE_IGNORED: {
    title: "A Procfile is not read by the application's buildpack",
    fix: "Set the variables its lines mean (web: CC_RUN_COMMAND for Node.js; other lines: CC_WORKER_COMMAND, CC_WORKER_COMMAND_<n>), or deploy with the Procfile buildpack of runplan's kit (examples/procfile-buildpack, with --buildpack).",
  },
  ENV_SECRET_ON_COMMAND_LINE: {
    title: "A secret variable's value is written in runplan's command line",
    fix: "Keep the value out of the arguments: --env NAME (or --addon-env ADDON:NAME) takes it from runplan's own environment, --app-env-file FILE (or --addon-env-file ADDON=FILE) from a file, also one given as a file descriptor (--app-env-file /dev/fd/3 3<secrets.env).",
  },
  ENGINE_PROCESSES_APART: {
    title: 'Processes of the application that share no files in this engine',
    fix: "Share what processes exchange through an add-on (a database, Redis, object storage) or the network, not through files of the application's folder: each process group runs in a container of its own, where the service's instance (and runplan's local executor) gives them one folder.",
  },
  ENGINE_RESTART_DELAY: {
    title: "A worker's restart delay that this engine does not wait",
    fix: 'Nothing to change for the engine: it restarts the worker with its own back-off instead of CC_WORKER_RESTART_DELAY. Where the delay matters (a worker that must not retry at once), deploy on the local executor or Swarm, which wait it, or have the worker wait before it exits.',
  },
  K8S_WORKER_RESTART: {
    title: 'A worker restart policy that a Kubernetes Deployment cannot honour',
    fix: 'Kubernetes restarts the containers of a Deployment always: set CC_WORKER_RESTART=always, or run such a worker as a Job of your own.',
  },
});
