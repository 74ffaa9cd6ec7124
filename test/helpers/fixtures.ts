import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { planDigest } from '../../src/plan/digest.js';
import type { RunPlan } from '../../src/plan/schema.js';
import * as kit from '../../scripts/fixture-kit.mjs';
import { ROOT, runCli, startCli } from './cli.js';
import { get, post } from './http.js';
import { freePort } from './ports.js';
import { processesUnder, processOwnersUnder } from './processes.js';
import { appUser } from '../../src/process/app-user.js';
import { nodePlaceholders } from './node-inventory.js';
import { leaksIn, SCAN_VARIABLES, secretNeedles, secretsInTree } from './secret-scan.js';
import { deploymentDirs, removeAfterFile } from './temp.js';
import { dockerEngine, type EngineUnderTest, LOCAL_ENGINE } from './engines-under-test.js';

/** What a fixture app must do, kept beside it in expect.json. */
export interface FixtureExpectation {
  /** The rule of the specification the fixture proves. */
  readonly rule: string;
  readonly type?: string;
  /** Files of fixtures/<type>/_shared/ the app uses, copied into a temporary copy of it before deploying. */
  readonly shared?: readonly string[];
  /** Files of the copy whose `{{…}}` placeholders are filled first, e.g. a Gemfile naming this machine's Ruby. */
  readonly templates?: readonly string[];
  /** Commands run in the copy before deploying, as the app's developer would (e.g. `bundle lock --local`). */
  readonly prepare?: readonly (readonly string[])[];
  /** The test environment the fixture needs (e.g. "verdaccio"): only its own test file deploys it. */
  readonly setup?: string;
  /** Application variables. */
  readonly env?: Readonly<Record<string, string>>;
  /** Variables of linked add-ons, by add-on name. */
  readonly addons?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly deploy: 'healthy' | 'fails';
  /** With deploy "fails": the error code and exit status expected. */
  readonly errorCode?: string;
  readonly exitCode?: number;
  /** Lines the output must contain. */
  readonly output?: readonly string[];
  /** Text the output must not contain. */
  readonly notInOutput?: readonly string[];
  readonly requests?: readonly {
    readonly path: string;
    /** A POST of this many bytes (an upload) instead of a GET. */
    readonly uploadBytes?: number;
    readonly status: number;
    readonly headers?: Readonly<Record<string, string>>;
    readonly json?: Readonly<Record<string, unknown>>;
    /** Fields of the JSON answer whose text must match a regular expression (e.g. "^v22\\.23\\."). */
    readonly match?: Readonly<Record<string, string>>;
    readonly bodyIncludes?: string;
    /** Texts the body must not contain. */
    readonly bodyExcludes?: readonly string[];
    readonly responseHeaders?: Readonly<Record<string, string>>;
  }[];
  /** How long the test may take, when a build takes longer than the default 180 s allows (a native module compiled). */
  readonly timeoutSeconds?: number;
  /** More arguments for `runplan run`, e.g. the instance size: ["--memory", "1G"]. */
  readonly args?: readonly string[];
  /** Environment of the runplan process itself: host-level settings, never the application's variables. */
  readonly hostEnv?: Readonly<Record<string, string>>;
  /** Services the test must start first (e.g. "redis"); their addresses fill `{{…}}` placeholders. */
  readonly services?: readonly string[];
  /**
   * Several deployments of the same application, each its own test. A variant's
   * fields replace the fixture's, except env, addons and hostEnv, which merge.
   */
  readonly variants?: readonly FixtureVariant[];
}

type FixtureVariant = Partial<Omit<FixtureExpectation, 'variants'>> & { readonly name: string };

export interface Fixture {
  readonly type: string;
  readonly name: string;
  readonly dir: string;
  readonly expect: FixtureExpectation;
}

/** Every fixture app under fixtures/<type>/<case>/ with an expect.json; each variant is a fixture of its own ("<case>/<variant>"). */
export function listFixtures(type?: string): Fixture[] {
  return kit.listFixtures<FixtureExpectation>(type);
}

/** CLI arguments for a fixture's variables. */
export function envArgs(expectation: FixtureExpectation): string[] {
  const args: string[] = [];
  for (const [k, v] of Object.entries(expectation.env ?? {})) args.push('--env', `${k}=${v}`);
  for (const [addon, vars] of Object.entries(expectation.addons ?? {})) {
    for (const [k, v] of Object.entries(vars)) args.push('--addon-env', `${addon}:${k}=${v}`);
  }
  if (expectation.type) args.push('--type', expectation.type);
  return args;
}

export interface CheckOptions {
  /** More CLI arguments, e.g. the address of a service the test started. */
  readonly extraArgs?: readonly string[];
  /** Host-level environment for every fixture of a kind (e.g. a mirror the test started); expect.json's hostEnv wins. */
  readonly hostEnv?: Readonly<Record<string, string>>;
  /** Values for `{{name}}` in expect.json strings, templates and preparation commands; `{{port}}` is always the deployment's port. */
  readonly placeholders?: Readonly<Record<string, string>>;
  /**
   * Where the saved plan is carried out: here (`build --plan`, `run --plan`, the
   * default), or in Docker (`image --plan`, `run --plan --runner docker`, with the
   * engine at this DOCKER_HOST). Shorthand for `engine: dockerEngine(host)`.
   */
  readonly docker?: string;
  /** The executor that carries out the saved plan (engines-under-test.ts); default this machine's. */
  readonly engine?: EngineUnderTest;
  /** Called while the deployment is healthy, with its processes (run here, not in Docker). */
  readonly whileRunning?: (processes: ReturnType<typeof processOwnersUnder>) => void;
  /** Lines a foreground deployment must print once healthy, waited for (up to a minute each) before the HTTP checks: what its processes do later. */
  readonly awaitLines?: readonly string[];
  /** Called once the deployment is healthy, before the HTTP checks, while it still runs: checks of what the engine keeps of it (engines-under-test.ts `records`). */
  readonly whileDeployed?: () => Promise<void>;
}

/**
 * What `{{name}}` and `{{name:argument}}` mean in a fixture: the values the test
 * provides (service addresses, the port, the published Node.js versions of
 * nodePlaceholders()), then this machine's versions (`{{RUBY_VERSION}}`…).
 */
function placeholderResolver(provided: Readonly<Record<string, string>> = {}): kit.PlaceholderResolver {
  return (name, argument) => provided[argument === undefined ? name : `${name}:${argument}`] ?? kit.machinePlaceholder(name);
}

export function fillPlaceholders<T>(value: T, provided: Readonly<Record<string, string>>): T {
  return kit.fillPlaceholders(value, placeholderResolver(provided));
}

/**
 * The fixture ready to deploy: when it uses shared files, templates or
 * preparation commands, a temporary copy made by fixture-kit (removed after the
 * test file), its templates filled with `provided` values (e.g. the address of a
 * registry the test started) and this machine's. Deploying the same prepared
 * fixture twice builds the same application twice (as a rebuild does).
 */
export async function prepareFixture(fixture: Fixture, placeholders: Readonly<Record<string, string>> = {}): Promise<Fixture> {
  const { dir, cleanup } = kit.prepareCopy(fixture, placeholderResolver(placeholders));
  if (cleanup === undefined) return fixture;
  removeAfterFile(cleanup);
  return { ...fixture, dir, expect: { ...fixture.expect, shared: [], templates: [], prepare: [] } };
}

/** What the CLI printed while a fixture went through `plan`, `build --plan` and `run --plan`. */
export interface FixtureOutputs {
  readonly plan: string;
  /** The plan's JSON (empty when planning failed). */
  readonly planJson: string;
  /** Empty when planning failed. */
  readonly build: string;
  /** Empty when planning or the build failed. */
  readonly run: string;
  readonly all: string;
}

/**
 * Deploys a fixture for real the way a host that stores plans does: `runplan
 * plan --json` (the plan must name no directory of the machine and no code),
 * then `runplan build --plan` and `runplan run --plan` carrying out that very
 * plan. Checks it against its expect.json: the HTTP answers while it runs, or
 * the error of whichever stage must fail; then that nothing of it is left running.
 */
export async function checkFixture(given: Fixture, options: CheckOptions = {}): Promise<FixtureOutputs> {
  const fixture = await prepareFixture(given, options.placeholders);
  const engine = options.engine ?? (options.docker === undefined ? LOCAL_ENGINE : dockerEngine(options.docker));
  const dirs = await deploymentDirs();
  const port = await freePort();
  const expectation = fillPlaceholders(fixture.expect, {
    ...options.placeholders,
    ...(await nodePlaceholders(fixture.expect)),
    ...(await appUidPlaceholder(fixture.expect, engine.inImage)),
    port: String(port),
  });
  // Every deployment also carries known secret values (test/helpers/secret-scan.ts); none may be printed or written.
  const scanned = { ...SCAN_VARIABLES, ...expectation.env, ...Object.assign({}, ...Object.values(expectation.addons ?? {})) };
  const needles = secretNeedles(scanned);
  const scanArgs = Object.entries(SCAN_VARIABLES).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  const inputs = [fixture.dir, '--port', String(port), ...envArgs(expectation), ...scanArgs, ...(expectation.args ?? []), ...(options.extraArgs ?? [])];
  // A stability window of 1 s, not 3: a fixture about the window sets its own (fixtures/node/exits-after-listen), and 150 deployments wait 300 s less.
  const env = { ...dirs.env, RUNPLAN_STABILITY_WINDOW: '1', ...options.hostEnv, ...expectation.hostEnv };
  const outputs = { plan: '', planJson: '', build: '', run: '' };
  const all = () => [outputs.plan, outputs.build, outputs.run].join('\n');
  const finish = async (): Promise<FixtureOutputs> => {
    for (const line of expectation.output ?? []) expect(all()).toContain(line);
    expect(leaksIn(`${all()}\n${outputs.planJson}`, needles), 'secret values printed or in the plan').toEqual([]);
    // The build, its logs and the saved plan: the token file npm or Yarn read during the build steps is gone after them (issue 21).
    expect(await secretsInTree(dirs.workDir, needles, fixture.dir), 'secret values in files the deployment wrote').toEqual([]);
    for (const text of expectation.notInOutput ?? []) expect(all()).not.toContain(text);
    expect(processesUnder(dirs.workDir)).toEqual([]);
    return { ...outputs, all: all() };
  };
  const failedAsExpected = (stage: { code: number | null; stderr: string; output: string }) => {
    expect(expectation.deploy, `${fixture.name} failed unexpectedly:\n${stage.output}`).toBe('fails');
    expect(stage.code, stage.output).toBe(expectation.exitCode ?? 1);
    if (expectation.errorCode) expect(stage.stderr).toContain(expectation.errorCode);
    return finish();
  };

  const planned = await runCli(['plan', ...inputs, '--json'], env);
  outputs.plan = planned.output;
  outputs.planJson = planned.stdout;
  if (planned.code !== 0) return failedAsExpected(planned);
  expectPortablePlan(planned.stdout, [fixture.dir, dirs.workDir, dirs.cacheDir, ROOT]);
  const planFile = join(dirs.workDir, 'plan.json');
  await writeFile(planFile, planned.stdout);

  const built = await runCli([engine.build, ...inputs, '--plan', planFile], { ...env, ...engine.env });
  outputs.build = built.output;
  expect(built.output).toContain(`==> carrying out ${planFile}: ${planDigest(JSON.parse(planned.stdout) as RunPlan)}`);
  if (built.code !== 0) return failedAsExpected(built);

  const run = startCli([...engine.run, ...inputs, '--plan', planFile], { ...env, ...engine.env });
  const deployed = async (): Promise<FixtureOutputs> => {
    try {
      if (expectation.deploy === 'fails' || !engine.foreground) {
        const code = await run.exited;
        outputs.run = run.output();
        if (expectation.deploy === 'fails') return await failedAsExpected({ code, stderr: run.stderr(), output: run.output() });
        expect(code, run.output()).toBe(0);
      } else {
        await run.waitFor('==> deployment healthy');
        for (const line of options.awaitLines ?? []) await run.waitFor(line, 60_000);
      }
      await options.whileDeployed?.();
      for (const request of expectation.requests ?? []) {
        const url = `http://127.0.0.1:${port}${request.path}`;
        const answer = request.uploadBytes === undefined ? await get(url, { ...request.headers }) : await post(url, Buffer.alloc(request.uploadBytes, 'x'), { ...request.headers });
        expect(answer.status, `GET ${request.path}: ${answer.body}`).toBe(request.status);
        if (request.json) expect(JSON.parse(answer.body), `GET ${request.path}`).toMatchObject(request.json);
        for (const [field, pattern] of Object.entries(request.match ?? {})) {
          expect(String(JSON.parse(answer.body)[field]), `GET ${request.path} field ${field}`).toMatch(new RegExp(pattern));
        }
        if (request.bodyIncludes) expect(answer.body, `GET ${request.path}`).toContain(request.bodyIncludes);
        for (const text of request.bodyExcludes ?? []) expect(answer.body, `GET ${request.path}`).not.toContain(text);
        for (const [name, value] of Object.entries(request.responseHeaders ?? {})) {
          expect(answer.headers[name.toLowerCase()], `GET ${request.path} header ${name}`).toBe(value);
        }
      }
      if (!engine.inImage) {
        const processes = processOwnersUnder(dirs.workDir);
        // As root, runplan runs every process of the application as its unprivileged user (docs/security.md).
        if (process.getuid?.() === 0)
          expect(
            processes.filter((p) => p.uid === 0),
            'processes of the deployment running as root',
          ).toEqual([]);
        options.whileRunning?.(processes);
      }
      if (engine.foreground) {
        run.child.kill('SIGINT');
        expect(await run.exited, run.output()).toBe(0);
        outputs.run = run.output();
      }
      return await finish();
    } finally {
      if (run.child.exitCode === null) {
        run.child.kill('SIGTERM');
        await run.exited;
      }
      // What a deployment that outlives runplan's process (a Swarm service) left behind.
      if (engine.remove) await runCli([...engine.remove, ...inputs], { ...env, ...engine.env });
    }
  };
  const result = await deployed();
  expect(engine.leftBehind?.(`${outputs.build}\n${outputs.run}`) ?? [], `what the ${engine.name} deployment left in the engine`).toEqual([]);
  return result;
}

/**
 * `{{appUid}}`: the uid the application must run as — runplan's unprivileged
 * user when the tests run as root, else the tests' own; in an image, its user 1000.
 */
async function appUidPlaceholder(value: unknown, inImage: boolean): Promise<Record<string, string>> {
  if (!JSON.stringify(value).includes('{{appUid}}')) return {};
  if (inImage) return { appUid: '1000' };
  return { appUid: String(process.getuid?.() === 0 ? (await appUser()).uid : process.getuid?.()) };
}

/**
 * A plan stands on its own: it names no directory of this machine's application,
 * build, cache or checkout (the executor fills ${APP_HOME} and ${RUN_DIR}), and
 * no code (no step refers to a function of runplan's).
 */
function expectPortablePlan(json: string, machinePaths: readonly string[]): void {
  for (const path of machinePaths) expect(json, `the plan names ${path}`).not.toContain(path);
  const plan = JSON.parse(json) as RunPlan;
  for (const step of plan.build.steps) expect(['exec', 'shell', 'install'], `step ${step.name}`).toContain(step.run.kind);
}
