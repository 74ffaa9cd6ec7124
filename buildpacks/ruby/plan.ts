import {
  type BuildStep,
  decide,
  type Decision,
  DEFAULT_RESTART,
  DEFAULT_STOP_GRACE_MS,
  placeholder,
  type PlanContext,
  type PlanContribution,
  type PlannedFile,
  type PlannedProcess,
  type PlanWarning,
  previousDefault,
  procfileIgnored,
  sshRemote,
  textChunks,
} from '../../src/kit/index.js';
import { RubyErrors, RubyWarnings } from './errors.js';
import { declaredGems, parseLockFile, parseRubyDirective } from './gemfile.js';
import { HTTP_JSON, parseHttpJson, type HttpSettings } from './http-json.js';
import { NGINX_CONF, NGINX_USERS, renderNginxConfig } from './nginx-config.js';
import type { ResolvedRubyOptions, RubyInventoryData } from './options.js';
import type { InstalledRuby } from './rubies.js';
import { rubyProcfileReader } from './procfile-reader.js';
import { readProject } from './project.js';
import { resolveBasicAuth } from './resolve-basic-auth.js';
import { planBundle } from './resolve-bundle.js';
import { resolvePumaSizing } from './resolve-puma-sizing.js';
import { resolveClientMaxBodySize } from './resolve-body-size.js';
import { resolveBuildHeap } from './resolve-build-heap.js';
import { resolveRakeGoals } from './resolve-rake-goals.js';
import { resolveReadTimeout } from './resolve-read-timeout.js';
import { resolveRubyVersion } from './resolve-ruby-version.js';
import { resolveSidekiq, sidekiqFileList } from './resolve-sidekiq.js';
import { resolveStaticFiles } from './resolve-static-files.js';
import { servedFilesStep } from './served-files-check.js';

const STORAGE_VARIABLES = ['STORAGE_ADDON_KEY_ID', 'STORAGE_ADDON_KEY_SECRET', 'STORAGE_ADDON_BUCKET_NAME', 'STORAGE_ADDON_ENDPOINT'];

/**
 * Ruby on Rails plan: checks, Ruby version, bundle install, rake goals, then
 * Puma on a unix socket behind nginx on the web port, and Sidekiq workers.
 */
/** More are told apart by the generic rule only: a plan stays small whatever the lock file holds. */
const MAX_NAMED_SSH_SOURCES = 20;

function gemNames(gems: readonly string[]): string {
  return gems.length > 5 ? `${gems.slice(0, 5).join(', ')} and ${gems.length - 5} more` : gems.join(', ');
}

export async function planRuby({ files, env, host, inventory, previous }: PlanContext, options: ResolvedRubyOptions): Promise<PlanContribution> {
  const machine = inventory as RubyInventoryData;
  // nginx and Puma need absolute paths: the executor fills them in (docs/plan.md, "Placeholders").
  const appRoot = placeholder('APP_HOME');
  const project = await readProject(files);
  const lock = parseLockFile(project.lockFile);
  const gems = declaredGems(project.gemfile);
  const decisions: Decision[] = [];
  const warnings: PlanWarning[] = [];
  const value = (name: string) => {
    const v = env.get(name);
    return v === undefined || v.trim() === '' ? undefined : v;
  };

  // Rack server (CC_RACKUP_SERVER) and the puma check of Ruby rule 1.
  const rackup = value('CC_RACKUP_SERVER')?.trim();
  if (rackup !== undefined && rackup !== 'puma') {
    throw RubyErrors.RUBY_RACKUP_SERVER_INVALID.create({
      message: `CC_RACKUP_SERVER=${JSON.stringify(rackup)}: this buildpack runs Puma behind nginx on a unix socket; other Rack servers are not supported.`,
      variable: 'CC_RACKUP_SERVER',
    });
  }
  if (!gems.has('puma') && !lock.dependencies.has('puma')) {
    throw RubyErrors.RUBY_PUMA_GEM_MISSING.create({ message: `${project.gemfileName} does not include the gem puma, which runs the application.`, file: project.gemfileName });
  }
  decisions.push(
    decide({
      id: 'ruby.server',
      subject: 'Rack server',
      requests: [{ source: 'env CC_RACKUP_SERVER', value: rackup }],
      resolved: `puma ${lock.specs.get('puma') ?? ''}`.trim(),
      reason: `CC_RACKUP_SERVER defaults to puma; ${project.gemfileName} includes it (Ruby rule 1)`,
    }),
  );

  // Ruby version (rule 2).
  const directive = parseRubyDirective(project.gemfile);
  const version = resolveRubyVersion({
    gemfileName: project.gemfileName,
    directive,
    directiveFileContent: directive?.kind === 'file' ? await files.readText(directive.path) : undefined,
    envVersion: env.get('CC_RUBY_VERSION'),
    lockFileName: project.lockFileName,
    lockVersion: lock.rubyVersion,
    dotRubyVersion: await files.readText('.ruby-version'),
    available: machine.rubies,
    defaultSeries: options.defaultSeries,
    previousDefault: previousDefault(previous, 'ruby.version'),
  });
  warnings.push(...version.warnings);

  // Environment name.
  const rubyEnv = value('RUBY_ENV')?.trim() ?? 'production';
  if (!/^[A-Za-z0-9_][A-Za-z0-9_-]*$/.test(rubyEnv)) {
    throw RubyErrors.RUBY_ENV_INVALID.create({ message: `RUBY_ENV=${JSON.stringify(rubyEnv)} is not an environment name.`, variable: 'RUBY_ENV' });
  }
  decisions.push(
    decide({
      id: 'ruby.env',
      subject: 'Ruby environment (RAILS_ENV, RACK_ENV)',
      requests: [{ source: 'env RUBY_ENV', value: value('RUBY_ENV') }],
      resolved: rubyEnv,
      reason: 'RUBY_ENV (default production) sets RAILS_ENV and RACK_ENV when they are not set themselves',
      lost: ['RAILS_ENV', 'RACK_ENV']
        .filter((n) => env.has(n) && env.get(n) !== rubyEnv)
        .map((n) => ({ source: `env ${n}`, value: env.get(n) ?? null, reason: `${n} is set explicitly and kept; puma and sidekiq still run with -e ${rubyEnv}` })),
    }),
  );

  // Bundle (rule 1, build phase).
  const bundle = planBundle({
    gemfileName: project.gemfileName,
    gemfile: project.gemfile,
    lockFileName: project.lockFileName,
    lockFile: project.lockFile,
    ruby: version.ruby,
    gemSource: options.gemSource,
    without: value('BUNDLE_WITHOUT'),
  });
  decisions.push(bundle.decision);
  const buildHeap = resolveBuildHeap(env.get('NODE_OPTIONS'), host.buildInstance);
  if (buildHeap.decision) decisions.push(buildHeap.decision);
  const rubyStep = (name: string, description: string, argv: string[], extraEnv: Record<string, string> = {}): BuildStep => ({
    name,
    description,
    run: { kind: 'exec', argv },
    cwd: '.',
    env: { ...bundle.env, ...extraEnv },
    pathPrepend: [...bundle.pathPrepend],
    layer: null,
  });

  // Rake goals (rule 3).
  const rake = resolveRakeGoals(env.get('CC_RAKEGOALS'));
  decisions.push(rake.decision);
  const rakeSteps = rake.goals.map((goal, i) => rubyStep(rake.goals.length === 1 ? 'rake' : `rake-${i + 1}`, `rake goal ${goal} from CC_RAKEGOALS`, ['bundle', 'exec', 'rake', goal], buildHeap.env));

  // Puma sizing (rule 5).
  const sizing = resolvePumaSizing({ env, pumaRb: await files.readText('config/puma.rb'), instance: host.instance });
  decisions.push(...sizing.decisions);

  // Sidekiq (rule 4).
  const listed = sidekiqFileList(env.get('CC_SIDEKIQ_FILES'));
  const candidates = [...listed, 'config/sidekiq.yml'];
  const sidekiq = await resolveSidekiq(
    env.get('CC_ENABLE_SIDEKIQ'),
    env.get('CC_SIDEKIQ_FILES'),
    await Promise.all(candidates.map(async (path) => ({ path, text: path.split('/').includes('..') ? undefined : await files.readText(path) }))),
    rubyEnv,
  );
  decisions.push(sidekiq.decision);
  warnings.push(...sidekiq.warnings);
  if (sidekiq.processes.length > 0 && !lock.specs.has('sidekiq')) {
    throw RubyErrors.RUBY_SIDEKIQ_GEM_MISSING.create({
      message: `${sidekiq.decision.source.replace(/^env /, '')} enables Sidekiq but ${project.lockFileName} has no gem sidekiq.`,
      file: project.gemfileName,
    });
  }

  // A Procfile runs nothing here: say what its lines mean in this buildpack's variables.
  const procfile = procfileIgnored(await files.readText('Procfile'), rubyProcfileReader({ env, sidekiqRuns: sidekiq.processes.length > 0, rakeGoals: rake.goals }));
  if (procfile) warnings.push(procfile);

  // nginx in front (rules 6 and 7, http.json, basic auth, Limits).
  const timeout = resolveReadTimeout(env.get('NGINX_READ_TIMEOUT'));
  const staticFiles = await resolveStaticFiles(env.get('STATIC_FILES_PATH'), env.get('STATIC_URL_PREFIX'), (p) => files.isDirectory(p));
  const auth = resolveBasicAuth(env.list().map((e) => [e.name, e.value] as const));
  const httpText = await files.readText(HTTP_JSON);
  const http: HttpSettings = httpText === undefined ? {} : await parseHttpJson(httpText, async (p) => (await files.exists(p)) && !(await files.isDirectory(p)));
  const bodySize = resolveClientMaxBodySize(env.get('NGINX_CLIENT_MAX_BODY_SIZE'), http.clientMaxBodySize);
  decisions.push(timeout.decision, bodySize.decision, staticFiles.decision, httpDecision(httpText !== undefined, http));
  if (auth) decisions.push(auth.decision);

  // In the executor's short run directory: unix socket paths are limited to 107 bytes, build directories are long.
  const socket = `${placeholder('RUN_DIR')}/puma.sock`;
  // By name, from its directory on the executor's stack (${NGINX_BIN}); where it is here is told in a decision.
  const nginxPath = [placeholder('NGINX_BIN')];
  decisions.push(programsDecision(version.ruby, options.nginx ?? machine.nginx));
  // No `user` directive by default: the executor starts nginx as the unprivileged user when it
  // runs as root (docs/security.md), so neither nginx's master nor its workers are ever root.
  const nginxUser = options.nginxUser ?? undefined;
  const nginxConf = renderNginxConfig({
    appRoot,
    port: host.port,
    upstreamSocket: socket,
    workerProcesses: Math.max(1, Math.min(host.instance.cpus, 4)),
    user: nginxUser,
    readTimeoutS: timeout.seconds,
    clientMaxBodySize: bodySize.size,
    staticFiles: staticFiles.settings,
    basicAuth: auth !== undefined,
    http,
  });
  const nginxArgs = ['-e', 'stderr', '-p', `${appRoot}/`, '-c', `${appRoot}/${NGINX_CONF}`];

  // Logs and secrets (rule 8, Errors).
  decisions.push(logsDecision(value('RAILS_LOG_TO_STDOUT')));
  const secretYml = await files.readText('config/secret.yml');
  if (secretYml?.includes('SECRET_KEY_BASE') && value('SECRET_KEY_BASE') === undefined) {
    warnings.push(
      RubyWarnings.RUBY_SECRET_KEY_BASE_MISSING.create({ message: 'config/secret.yml reads ENV["SECRET_KEY_BASE"], which is not set.', file: 'config/secret.yml', variable: 'SECRET_KEY_BASE' }),
    );
  }
  const storage = STORAGE_VARIABLES.filter((n) => env.has(n));
  if (storage.length > 0) {
    decisions.push(
      decide({
        id: 'ruby.storage',
        subject: 'Object storage variables',
        requests: [{ source: storage.map((n) => `${env.entry(n)?.source} ${n}`).join(', '), value: storage.join(', ') }],
        resolved: 'passed through unchanged',
        reason: "the storage add-on's variables reach the application untouched (for config/storage.yml); runplan treats them as secrets and never prints their values",
      }),
    );
  }

  const processEnv = { ...bundle.env };
  const proc = (name: string, role: PlannedProcess['role'], argv: string[], extra: Partial<PlannedProcess> = {}): PlannedProcess => ({
    name,
    role,
    command: { kind: 'exec', argv },
    cwd: '.',
    env: processEnv,
    pathPrepend: [...bundle.pathPrepend],
    port: null,
    restart: DEFAULT_RESTART,
    stopGraceMs: DEFAULT_STOP_GRACE_MS,
    ...extra,
  });
  const hasPumaRb = await files.exists('config/puma.rb');
  const processes: PlannedProcess[] = [
    proc('puma', 'worker', ['bundle', 'exec', 'puma', ...(hasPumaRb ? ['-C', 'config/puma.rb'] : []), '-b', `unix://${socket}`, '-e', rubyEnv, ...sizing.args]),
    proc('web', 'web', ['nginx', ...nginxArgs], {
      port: host.port,
      env: {},
      pathPrepend: nginxPath,
      // nginx opens the web port only once Puma accepts connections on its socket. Puma binds it once the application
      // is loaded in single mode and with preload_app!; a cluster without it binds first, and a request waits in the
      // socket's backlog until a worker booted. No request is sent: Rails logs one for a path it has no route for
      // (GET / of an API-only application) as a FATAL RoutingError.
      startAfter: [{ kind: 'unix-socket', socket }],
    }),
    ...sidekiq.processes.map((p) => proc(p.name, 'worker', ['bundle', 'exec', 'sidekiq', '-e', rubyEnv, ...p.args], { stopGraceMs: 30_000 })),
  ];

  // Planning saw these through the application's files (links leading out were refused); the build checks its copy again.
  const served = [...(staticFiles.settings ? [staticFiles.settings.directory] : []), ...(http.errorPages ?? []).map((p) => p.file)];
  const plannedFiles: PlannedFile[] = [
    ...bundle.files,
    { path: NGINX_CONF, phase: 'build', mode: 0o644, secret: false, content: textChunks(nginxConf), reason: 'nginx in front of Puma: web port, static files, basic auth, http.json, read timeout' },
  ];
  if (auth) {
    plannedFiles.push({
      path: NGINX_USERS,
      phase: 'run',
      mode: 0o600,
      secret: true,
      content: [...auth.userFile],
      reason: `basic-auth users from ${auth.variables.join(', ')} (written when the processes start, never printed)`,
    });
  }

  return {
    runtimes: [{ name: 'ruby', version: version.ruby.version, distribution: version.ruby.origin, decision: version.decision }],
    decisions,
    steps: [
      bundle.step,
      ...rakeSteps,
      ...(served.length > 0 ? [servedFilesStep(served)] : []),
      {
        name: 'nginx-check',
        description: `check the generated ${NGINX_CONF} with nginx -t before anything starts`,
        run: { kind: 'exec', argv: ['nginx', '-t', '-q', ...nginxArgs] },
        cwd: '.',
        env: {},
        pathPrepend: nginxPath,
        layer: null,
      },
    ],
    layers: [bundle.layer],
    processes,
    // CC_PRE_BUILD_HOOK before bundle install, CC_POST_BUILD_HOOK after the rake goals and before the checks.
    hookPoints: { dependencies: bundle.step.name, checks: served.length > 0 ? 'served-files-check' : 'nginx-check' },
    // Git sources over SSH that bundle install clones (CC_SSH_PRIVATE_KEY).
    sshGitDependencies: lock.gitSources
      .filter((g) => sshRemote(g.remote) !== undefined)
      .slice(0, MAX_NAMED_SSH_SOURCES)
      .map((g) => ({ name: gemNames(g.gems) || g.remote, url: g.remote, file: project.lockFileName })),
    // Hooks and workers run like Puma and Sidekiq: with the bundle's gems (bundle exec …) on PATH.
    userCommands: { env: processEnv, pathPrepend: [...bundle.pathPrepend] },
    ...(Object.keys(buildHeap.env).length > 0 ? { buildCommands: { env: { ...processEnv, ...buildHeap.env }, pathPrepend: [...bundle.pathPrepend] } } : {}),
    files: plannedFiles,
    warnings,
    envDefaults: [
      { name: 'RUBY_ENV', value: rubyEnv, reason: 'the Ruby environment (default production)' },
      { name: 'RAILS_ENV', value: rubyEnv, reason: 'from RUBY_ENV' },
      { name: 'RACK_ENV', value: rubyEnv, reason: 'from RUBY_ENV' },
      ...bundle.envDefaults,
      ...sizing.envDefaults,
    ],
    defaultHealthCheck: { kind: 'port', reason: 'no CC_HEALTH_CHECK_PATH is set: the web port must accept connections; nginx opens it only once Puma answers, so this means the application is ready' },
  };
}

/**
 * Which Ruby and nginx the plan runs, and where they were found here: the plan
 * names them (`bundle`, `nginx`) and puts ${RUBY_BIN} and ${NGINX_BIN} on PATH,
 * which each executor fills on its stack (stack.ts for this host's).
 */
function programsDecision(ruby: InstalledRuby, nginx: string): Decision {
  return decide({
    id: 'ruby.programs',
    subject: 'Programs of the stack (Ruby, nginx)',
    basis: 'inventory',
    resolved: `ruby, bundle, rake from \${RUBY_BIN} (Ruby ${ruby.version}); nginx from \${NGINX_BIN}`,
    reason: `the plan names its programs and each executor finds them on its stack: the local executor in its host's inventory (the Ruby of version ${ruby.version}, nginx), an image in its stack image (Debian's /usr/bin and /usr/sbin); where planning found them: Ruby ${ruby.version} in ${ruby.bindir} (${ruby.origin}), nginx ${nginx.startsWith('/') ? `at ${nginx}` : 'nowhere (not installed: the local executor refuses the plan, an image has its own)'}`,
  });
}

function httpDecision(present: boolean, http: HttpSettings): Decision {
  const parts: string[] = [];
  if (http.forceHttps !== undefined) parts.push(`force_https ${http.forceHttps}`);
  if (http.charset) parts.push(`charset ${http.charset}`);
  if (http.aliases?.length) parts.push(`${http.aliases.length} alias${http.aliases.length > 1 ? 'es' : ''}`);
  if (http.errorPages?.length) parts.push(`error pages for ${http.errorPages.map((p) => p.status).join(', ')}`);
  if (http.languages) parts.push(`languages ${http.languages.codes.map((c) => c.code).join(', ') || '(none)'}${http.languages.default !== undefined ? ' + default' : ''}`);
  if (http.clientMaxBodySize) parts.push(`client_max_body_size ${http.clientMaxBodySize}`);
  return decide({
    id: 'ruby.http-json',
    subject: 'Web server settings (platform/http.json)',
    requests: [{ source: present ? HTTP_JSON : 'default', value: present ? HTTP_JSON : null }],
    resolved: parts.length > 0 ? parts.join('; ') : '(none)',
    reason: present
      ? 'each field becomes nginx configuration: force_https redirects when X-Forwarded-Proto is http, aliases redirect (301), error_pages replace error responses with files of the application, charset is added to text responses, languages rewrite paths by Accept-Language, client_max_body_size bounds request bodies'
      : `no ${HTTP_JSON}: nginx only proxies to Puma`,
  });
}

function logsDecision(toStdout: string | undefined): Decision {
  return decide({
    id: 'ruby.logs',
    subject: 'Application logs',
    requests: [{ source: 'env RAILS_LOG_TO_STDOUT', value: toStdout }],
    resolved: toStdout === 'true' ? 'standard output (shown as puma | …)' : 'as the application configures them',
    reason:
      toStdout === 'true'
        ? "RAILS_LOG_TO_STDOUT=true makes Rails' production configuration log to standard output, which runplan shows"
        : "RAILS_LOG_TO_STDOUT is not true: Rails logs to log/<env>.log; Puma's, nginx's and Sidekiq's output is shown",
  });
}
