import { defineErrors } from './runplan-error.js';

/** Error codes raised by the runplan core (buildpacks declare their own). */
export const CoreErrors = defineErrors({
  ENV_INVALID_NAME: {
    title: 'Invalid environment variable name',
    kind: 'input',
    fix: 'Rename the variable using only ASCII letters, digits and "_", not starting with a digit.',
  },
  ENV_MALFORMED_ASSIGNMENT: {
    title: 'Malformed NAME=VALUE assignment',
    kind: 'input',
    fix: 'Write each variable as NAME=VALUE (one per line in an env file, in dotenv\'s format: quote a value holding "#" or line breaks).',
  },
  ENV_VALUE_INVALID: {
    title: "A variable's value cannot be used",
    kind: 'input',
    fix: 'Remove the NUL byte from the value (no process environment can hold one), and line breaks from a value runplan writes into a file (NPM_TOKEN into .npmrc).',
  },
  ENV_NOT_SET: {
    title: "--env NAME names a variable runplan's own environment does not have",
    kind: 'input',
    fix: 'Export the variable to runplan before starting it (`export NAME` in the script or service unit that runs runplan), or give it in a file with --app-env-file FILE.',
  },
  ENV_SECRET_COPIED: {
    title: 'A variable that is not secret holds the value of a secret variable',
    kind: 'input',
    fix: 'Keep the value in the secret variable only and reference it by name: in a command (CC_RUN_COMMAND, a hook, a worker) write $NAME, which the shell expands when the command runs; elsewhere have the application read the secret variable.',
  },
  ENV_FILE_UNREADABLE: {
    title: 'Environment file cannot be read',
    kind: 'input',
    fix: 'Check the path given to --app-env-file / --addon-env-file: it must be a readable file.',
  },
  DETECT_NO_MATCH: {
    title: 'No buildpack recognises the application',
    kind: 'input',
    fix: 'Add the files one of the registered buildpacks looks for (the message says what each missed), or pass --type.',
  },
  DETECT_UNKNOWN_TYPE: {
    title: 'Unknown application type',
    kind: 'input',
    fix: 'Pass one of the registered types to --type.',
  },
  DETECT_REJECTED: {
    title: 'The requested buildpack does not apply to this application',
    kind: 'input',
    fix: 'Add the files the buildpack needs, or choose another --type.',
  },
  APP_DIR_NOT_FOUND: {
    title: 'Application directory not found',
    kind: 'input',
    fix: 'Pass the path of an existing directory that holds the application.',
  },
  APP_PATH_OUTSIDE: {
    title: 'A path of the application leads outside it',
    kind: 'input',
    fix: 'Replace the symbolic link with the file or directory itself (or point it inside the application), and name paths relative to the application root without "..".',
  },
  APP_FOLDER_NOT_FOUND: {
    title: 'APP_FOLDER names no folder of the repository',
    kind: 'input',
    fix: "Set APP_FOLDER to the path of the application's folder relative to the repository root (e.g. apps/web), as committed; unset it to deploy the repository root.",
  },
  APP_FOLDER_OUTSIDE: {
    title: 'APP_FOLDER leads outside the repository',
    kind: 'input',
    fix: 'Set APP_FOLDER to a folder inside the repository, relative to its root, without ".." that climbs out, and not through a symbolic link that points outside it.',
  },
  BUILD_CACHE_PATH_INVALID: {
    title: 'A path of CC_OVERRIDE_BUILDCACHE or CC_IGNORE_FROM_BUILDCACHE cannot be cached',
    kind: 'input',
    fix: 'List paths relative to the application folder, separated by ":" (e.g. node_modules:.cache), none absolute, climbing out with "..", or naming the folder itself.',
  },
  BUILDPACK_MODULE_INVALID: {
    title: 'A buildpack module given with --buildpack cannot be used',
    kind: 'input',
    fix: 'Name a module (a file, a package directory whose package.json "exports" or "main" names its entry, or a package installed where runplan runs) whose default export is a buildpack — an object with id, name, priority, detector.detect(), planner.plan() and defaultHealthCheck — or a function returning one; see docs/buildpack-authors.md.',
  },
  BUILDPACK_TIMEOUT: {
    title: "A buildpack's code did not finish in time",
    kind: 'deployment',
    fix: "Find why the buildpack named in the message hangs in the phase named (its module's top level, its factory, detect, its inventory provider's gather, or plan): a promise it never settles, a connection or program it waits on. If it only needs longer, raise the limit: --buildpack-timeout SECONDS or RUNPLAN_BUILDPACK_TIMEOUT (default 60 s), or RUNPLAN_INVENTORY_TIMEOUT for gathering an inventory (default 600 s).",
  },
  BUILDPACK_FAILED: {
    title: "A buildpack's code failed",
    kind: 'deployment',
    fix: "This is a bug of the buildpack named in the message: its code threw an error that is not one of runplan's coded errors (the error is in the message, and in details.cause with --json and --events). Report it to the buildpack's author, or remove the --buildpack that adds it.",
  },
  BUILDPACK_RESULT_INVALID: {
    title: 'A buildpack returned something its contract does not allow',
    kind: 'deployment',
    fix: "This is a bug of the buildpack named in the message: what its detect() or plan() returned does not match the contract (docs/buildpack-authors.md); the message lists the fields at fault. Report it to the buildpack's author, or remove the --buildpack that adds it.",
  },
  APP_FILE_NOT_REGULAR: {
    title: 'A file the application must provide is not a regular file',
    kind: 'input',
    fix: 'Commit a regular file at the path named (not a directory, FIFO, socket, device or loop of links).',
  },
  APP_FILE_TOO_LARGE: {
    title: 'A file of the application is larger than runplan reads',
    kind: 'input',
    fix: 'Such files hold a few lines of configuration: commit the right file at the path named, not a large or binary one.',
  },
  APP_FILE_UNREADABLE: {
    title: 'A file of the application cannot be read',
    kind: 'input',
    fix: 'Make the file readable by the user runplan runs as (check its permissions).',
  },
  PLAN_INVALID: {
    title: 'A buildpack produced a plan that does not match the run-plan schema',
    kind: 'internal',
    fix: 'This is a bug in the buildpack named in the message; report it with the plan output.',
  },
  PLAN_STACK_UNRESOLVED: {
    title: 'This host cannot say where the programs the plan names are',
    kind: 'deployment',
    fix: "Carry the plan out with the buildpack of its type registered (the built-in buildpacks say where their programs are), or in an image of the plan's stack (runplan image).",
  },
  PLAN_DOCUMENT_INVALID: {
    title: 'A run plan read from JSON does not match the schema',
    kind: 'input',
    fix: 'Produce the plan with `runplan plan --json` of the same runplan version, and do not edit it by hand.',
  },
  PLAN_DUPLICATE_BUILDPACK: {
    title: 'Two buildpacks share one id',
    kind: 'input',
    fix: 'Give the host buildpack an id not already registered, or replace the existing one explicitly with registry.replace().',
  },
  PLAN_SCHEMA_UNSUPPORTED: {
    title: 'A saved run plan has a schema version this runplan does not carry out',
    kind: 'input',
    fix: 'Plan again with this runplan (`runplan plan --json`), or carry the plan out with the runplan version named in it.',
  },
  PLAN_SECRET_VALUE: {
    title: 'The plan would hold the value of a secret variable',
    kind: 'input',
    fix: "Find where the application's files copy the secret's value (a script of package.json, a configuration file the buildpack reads) and reference the variable by name there ($NAME in a shell command); if the application holds no copy, it is a bug of the buildpack named in the message: report it.",
  },
  PLAN_SECRET_MISSING: {
    title: 'A saved run plan needs the value of a secret variable',
    kind: 'input',
    fix: 'Plans never hold secret values: pass the variable again when carrying the plan out (--env, --app-env-file or --addon-env).',
  },
  PLAN_ENV_MISMATCH: {
    title: 'A variable given with a saved plan differs from the plan',
    kind: 'input',
    fix: 'A saved plan is carried out as made: give only the secret values with --plan, or plan again with the new variables.',
  },
  INVENTORY_INVALID: {
    title: 'An inventory read from JSON does not match its schema',
    kind: 'input',
    fix: 'Write the inventory with `runplan inventory --out FILE` of the same runplan version, and do not edit it by hand.',
  },
  INVENTORY_INCOMPLETE: {
    title: 'The inventory has no part for the buildpack that plans the application',
    kind: 'input',
    fix: 'Gather an inventory that covers this application type (`runplan inventory --out FILE`, without --type or with this type).',
  },
  HEALTH_CHECK_PATH_INVALID: {
    title: 'Invalid health-check path',
    kind: 'input',
    fix: 'Set CC_HEALTH_CHECK_PATH / CC_HEALTH_CHECK_PATH_<n> to a URL path starting with "/", without spaces.',
  },
  HEALTH_CHECK_PATH_NAME_INVALID: {
    title: 'A health-check variable has a suffix other than a number',
    kind: 'input',
    fix: 'Name extra health-check paths CC_HEALTH_CHECK_PATH_<n> with n a number (CC_HEALTH_CHECK_PATH_0, _1, …), or use CC_HEALTH_CHECK_PATH.',
  },
  HEALTH_CHECK_FAILED: {
    title: 'Health check failed',
    kind: 'deployment',
    fix: 'Make every configured health-check path answer 200, or set CC_HEALTH_CHECK_PATH (and CC_HEALTH_CHECK_PATH_<n>) to paths that do, then deploy again.',
  },
  HEALTH_NOT_LISTENING: {
    title: 'The web process never accepted connections',
    kind: 'deployment',
    fix: 'Make the application listen on 0.0.0.0 at the port given in PORT (8080 on the service).',
  },
  HEALTH_LOOPBACK_ONLY: {
    title: 'The web process listens on the loopback interface only',
    kind: 'deployment',
    fix: 'Listen on 0.0.0.0 (all interfaces); the service reaches the application from outside its instance.',
  },
  HOOK_FAILED: {
    title: 'A hook command failed',
    kind: 'deployment',
    fix: "Read the hook's output above the error, then fix its command (the variable named) or what it runs, and deploy again.",
  },
  WORKER_COMMAND_NAME_INVALID: {
    title: 'A worker variable has a suffix other than a number',
    kind: 'input',
    fix: 'Name extra workers CC_WORKER_COMMAND_<n> with n a number (CC_WORKER_COMMAND_0, _1, …), or use CC_WORKER_COMMAND.',
  },
  WORKER_RESTART_INVALID: {
    title: 'CC_WORKER_RESTART has a value other than always, on-failure or no',
    kind: 'input',
    fix: 'Set CC_WORKER_RESTART to always, on-failure (the default) or no, or remove it.',
  },
  WORKER_RESTART_DELAY_INVALID: {
    title: 'CC_WORKER_RESTART_DELAY is not a whole number of seconds',
    kind: 'input',
    fix: 'Set CC_WORKER_RESTART_DELAY to a whole number of seconds from 0 to 3600 (default 1), or remove it.',
  },
  SSH_KEY_INVALID: {
    title: 'CC_SSH_PRIVATE_KEY is not a usable SSH private key',
    kind: 'input',
    fix: 'Set CC_SSH_PRIVATE_KEY to the whole text of one private key in OpenSSH or PEM format, from its -----BEGIN line to its -----END line, without a passphrase: a read-only deploy key made with `ssh-keygen -t ed25519 -N "" -f deploy_key` (its public half, deploy_key.pub, goes to the git server).',
  },
  SSH_KNOWN_HOSTS_INVALID: {
    title: 'CC_SSH_KNOWN_HOSTS holds a line that is not a known_hosts entry',
    kind: 'input',
    fix: 'Give one known_hosts line per server, as `ssh-keyscan -p PORT HOST` prints it: host names, key type, base64 key (e.g. "github.com ssh-ed25519 AAAAC3Nza…"); check the key against the fingerprint the git host publishes.',
  },
  SSH_DEPENDENCY_DENIED: {
    title: 'A git dependency fetched over SSH was refused',
    kind: 'input',
    fix: 'Set CC_SSH_PRIVATE_KEY to a private key (without passphrase) that the git server accepts for that repository, e.g. a read-only deploy key whose public half is added to the repository.',
  },
  SSH_HOST_KEY_UNTRUSTED: {
    title: 'The SSH server of a git dependency is not a known host',
    kind: 'input',
    fix: "Add the server's host key to CC_SSH_KNOWN_HOSTS (or to the host's known hosts file, --ssh-known-hosts): `ssh-keyscan -p PORT HOST` prints it; compare its fingerprint (`ssh-keygen -lf FILE`) with the one the git host publishes.",
  },
  SSH_CLIENT_MISSING: {
    title: 'This host has no SSH client',
    kind: 'deployment',
    fix: 'Install the OpenSSH client (apt-get install openssh-client) and git on the host: the build fetches git dependencies over SSH with them.',
  },
  BUILD_STEP_FAILED: {
    title: 'A build step failed',
    kind: 'deployment',
    fix: 'Read the step output above the error, fix the cause in the application, then build again.',
  },
  BUILD_STEP_TIMEOUT: {
    title: 'A build step did not finish in time',
    kind: 'deployment',
    fix: 'Find why the step hangs in its output above (a prompt waiting for input, a server started in the foreground, an unreachable host); if it only needs longer, raise the limit with --step-timeout SECONDS or RUNPLAN_BUILD_STEP_TIMEOUT (default 1800 s).',
  },
  BUILD_MEMORY_LIMIT: {
    title: 'A build step was killed for using more memory than the build may',
    kind: 'deployment',
    fix: "Make the build use less memory (Node.js's heap follows the instance: NODE_OPTIONS=--max-old-space-size lower; fewer parallel jobs), or build on a larger instance: the host's dedicated build instance, or a larger instance size.",
  },
  BUILD_PROCESS_LIMIT: {
    title: 'A build step failed after the build reached its limit of processes',
    kind: 'deployment',
    fix: 'Find what starts so many processes or threads in the step (a fork loop, a tool run with unbounded parallelism) and bound it; the limit follows the instance size.',
  },
  BUILD_DISK_LIMIT: {
    title: "A build step failed because the application's disk is full",
    kind: 'deployment',
    fix: "Make the build write less (a download or a generated folder it does not need, a cache without bound; the files the application itself writes at run time count too), or give the application a larger disk (the host's diskMb setting).",
  },
  BUILD_LOCKED: {
    title: 'Another build of the same application is running',
    kind: 'deployment',
    fix: 'Wait for the other build (the process named in the message) to finish, or let this one wait longer with --lock-wait SECONDS or RUNPLAN_BUILD_LOCK_WAIT (default 600 s). A lock whose process is gone is taken over by itself; remove the lock file only if its process runs on another machine and has stopped.',
  },
  BUILD_INTERRUPTED: {
    title: 'The build was interrupted',
    kind: 'deployment',
    fix: 'Run the build again; the interrupted one was removed.',
  },
  BUILD_DOWNLOAD_FAILED: {
    title: 'A runtime or tool could not be downloaded',
    kind: 'deployment',
    fix: 'Check that this host reaches the address in the message (the npm registry npm is configured with, or for Play 1.x the mirror of RUNPLAN_PLAY1_MIRROR) and that it serves that version.',
  },
  BUILD_DIGEST_MISMATCH: {
    title: 'A download does not match the digest in the plan',
    kind: 'deployment',
    fix: 'The source served other bytes than the plan names: repair the mirror or registry, or, if the digest in the plan (from the inventory or RUNPLAN_PLAY1_CHECKSUMS) is wrong, correct it and plan again.',
  },
  BUILD_ARCHIVE_INVALID: {
    title: 'A downloaded archive cannot be installed',
    kind: 'deployment',
    fix: 'Serve an unmodified distribution (a zip or tarball without links, holding the files the step names) at the address in the message.',
  },
  BUILD_WORKSPACE: {
    title: 'The build workspace cannot be prepared',
    kind: 'deployment',
    fix: 'Check free disk space, and that the work directory (--work-dir or RUNPLAN_WORK_DIR, default <cache-dir>/apps) is a directory this user can write.',
  },
  BUILD_TREE_CHANGED: {
    title: 'The application changed its build under runplan',
    kind: 'input',
    fix: "Let hooks, install scripts and the application write their own files only: do not replace folders of the build (the application's folder, node_modules, .runplan, a cached folder) by links, remove them or make them unreadable while runplan works in them. The message names the path and what runplan was doing.",
  },
  BUILD_FILE_ESCAPES_APP: {
    title: 'A file runplan writes into the build would land outside the application',
    kind: 'input',
    fix: 'Remove the committed symbolic link named in the message (or point it inside the application); runplan writes only inside the build directory.',
  },
  RUN_SPAWN_FAILED: {
    title: 'A process could not be started',
    kind: 'deployment',
    fix: 'Check that the command exists in the built application (for example the file named by main).',
  },
  RUN_PROCESS_EXITED: {
    title: 'The web process exited before the deployment was accepted',
    kind: 'deployment',
    fix: 'Read the process\'s last lines of output (in the error\'s details and in the log above it) and fix what made it exit: a program not found (exit status 127) must be installed by the build; a file the build should have made (dist/, .next/) needs the build script run (CC_POST_BUILD_HOOK, e.g. "npm run build"); the web command must keep the server running in the foreground.',
  },
  RUN_MEMORY_LIMIT: {
    title: 'The web process was killed for using more memory than its instance has',
    kind: 'deployment',
    fix: "Make the application use less memory (a leak, a cache without bound, too many workers or threads: CC_PUMA_WORKERS, WEB_CONCURRENCY), or deploy it on a larger instance. The limit holds for all of the application's processes together, as on a machine of that size.",
  },
  RUN_PORT_IN_USE: {
    title: 'The web port is already in use',
    kind: 'deployment',
    fix: 'Stop the program that listens on the port, or choose another with --port.',
  },
  ENGINE_UNAVAILABLE: {
    title: 'No usable container engine',
    kind: 'deployment',
    fix: "Start the Docker engine and point DOCKER_HOST at it (as for the docker CLI); install Debian's docker.io for a client that builds with BuildKit.",
  },
  ENGINE_COMMAND_FAILED: {
    title: 'The container engine refused a command',
    kind: 'deployment',
    fix: "Read the engine's message above; check the engine's state (disk space, a name already taken, a swarm not initialised) and try again.",
  },
  IMAGE_BUILD_FAILED: {
    title: 'The image build failed',
    kind: 'deployment',
    fix: 'Read the build output above the error (each line is prefixed with [image]); a failing step shows its own command and output.',
  },
  IMAGE_SSH_KEY_UNSUPPORTED: {
    title: 'The image engine does not support CC_SSH_PRIVATE_KEY yet',
    kind: 'input',
    fix: 'Build such an application with `runplan build` / `runplan run` (the local executor), or vendor its private git dependencies (or publish them to a private registry with NPM_TOKEN) and unset CC_SSH_PRIVATE_KEY for the image.',
  },
  STACK_BUILD_FAILED: {
    title: 'A stack image could not be built',
    kind: 'deployment',
    fix: "Check that mmdebstrap and the Debian mirror of this host's apt sources work (apt-get update), then run `runplan stack` again.",
  },
  STACK_TOOL_MISSING: {
    title: 'A program that builds the stack images is not installed',
    kind: 'deployment',
    fix: 'Install the Debian package the message names (apt-get install mmdebstrap), then run `runplan stack` (npm run stack-images) again.',
  },
  SWARM_NOT_MANAGER: {
    title: 'The Docker engine is not a swarm manager',
    kind: 'deployment',
    fix: 'Point DOCKER_HOST at a manager of the swarm, or make this engine one: `docker swarm init` (on one machine: `docker swarm init --advertise-addr 127.0.0.1`).',
  },
  SWARM_NOT_CONVERGED: {
    title: 'The swarm services did not reach the deployed state',
    kind: 'deployment',
    fix: 'Read the task errors and the health check above (`docker service ps --no-trunc SERVICE`, `docker service logs SERVICE`); fix the application or its variables and deploy again. An update that failed was rolled back: the previous version keeps serving.',
  },
  SWARM_IMAGE_MISMATCH: {
    title: 'The image was built from another plan',
    kind: 'input',
    fix: 'Deploy the image with the plan it was built from (`--plan`, the same variables), or build the image again from this plan (leave out --image).',
  },
  CLI_USAGE: {
    title: 'Invalid command line',
    kind: 'input',
    fix: 'Run `runplan --help` for the commands and options.',
  },
  CLI_UNFINISHED: {
    title: 'The command stopped before it finished',
    kind: 'deployment',
    fix: 'Nothing was done to completion: runplan was left waiting on something nothing would ever finish (a promise no program, timer or connection settles), which is a bug of runplan or of a --buildpack module. Run the command again with --events to see how far it got, and report it.',
  },
  CLI_INTERRUPTED: {
    title: 'The command was interrupted',
    kind: 'deployment',
    fix: 'A signal (SIGINT or SIGTERM) stopped the command before it finished; what it started was stopped and an unfinished build removed. Run it again.',
  },
  HOST_INVALID_SETTING: {
    title: 'Invalid host setting',
    kind: 'input',
    fix: 'Give the port as an integer 1–65535, CPUs as a positive integer and memory as e.g. 512M or 2G.',
  },
  HOST_PROGRAM_TIMEOUT: {
    title: 'A program of this host did not finish in time',
    kind: 'deployment',
    fix: 'Find why the program named in the message hangs on this host (a prompt waiting for input, an unreachable engine or mirror, a full disk) and run the command again.',
  },
  HOST_SANDBOX_UNAVAILABLE: {
    title: 'This machine cannot confine applications',
    kind: 'input',
    fix: "Run the host as root on Linux with Debian's bubblewrap and util-linux installed (apt-get install bubblewrap util-linux) and the memory, pids and cpu cgroup controllers mounted under /sys/fs/cgroup (v1 or v2).",
  },
  HOST_SUPERVISOR_UNAVAILABLE: {
    title: "This machine cannot keep a run's processes apart from runplan",
    kind: 'input',
    fix: "Install Debian's s6 package (apt-get install s6): runplan keeps each process of a lasting run under s6-supervise, so that it outlives the program that started it.",
  },

  HOST_APP_USER: {
    title: 'The unprivileged user cannot be used',
    kind: 'input',
    fix: 'Create the system user (useradd --system --user-group runplan), or set RUNPLAN_APP_USER to an existing user that is not root, and give runplan a work and cache directory that user can reach (e.g. under /var/lib or /var/cache).',
  },
});
