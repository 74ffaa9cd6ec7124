import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ROOT, startCli } from './cli.js';
import { get } from './http.js';
import { freePort } from './ports.js';
import { processesUnder } from './processes.js';
import { deploymentDirs, tempDir } from './temp.js';

/** What a fixture app must do, kept beside it in expect.json. */
export interface FixtureExpectation {
  /** The rule of the specification the fixture proves. */
  readonly rule: string;
  readonly type?: string;
  /** Files of fixtures/<type>/_shared/ the app uses, copied into a temporary copy of it before deploying. */
  readonly shared?: readonly string[];
  /** The test environment the fixture needs (e.g. "verdaccio"): only its own test file deploys it. */
  readonly setup?: string;
  /** More CLI arguments, e.g. the host's instance size. */
  readonly cliArgs?: readonly string[];
  /** Application variables; `${NAME}` is replaced by the test's `vars` (e.g. a registry's address). */
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
    readonly status: number;
    readonly headers?: Readonly<Record<string, string>>;
    readonly json?: Readonly<Record<string, unknown>>;
    /** Fields of the JSON answer whose text must match a regular expression (e.g. "^v22\\.23\\."). */
    readonly match?: Readonly<Record<string, string>>;
    readonly bodyIncludes?: string;
    readonly responseHeaders?: Readonly<Record<string, string>>;
  }[];
}

export interface Fixture {
  readonly type: string;
  readonly name: string;
  readonly dir: string;
  readonly expect: FixtureExpectation;
}

/** Every fixture app under fixtures/<type>/<case>/ with an expect.json. */
export function listFixtures(type?: string): Fixture[] {
  const base = join(ROOT, 'fixtures');
  const out: Fixture[] = [];
  for (const t of readdirSync(base).sort()) {
    if (type !== undefined && t !== type) continue;
    for (const name of readdirSync(join(base, t)).sort()) {
      const file = join(base, t, name, 'expect.json');
      if (existsSync(file)) out.push({ type: t, name, dir: join(base, t, name), expect: JSON.parse(readFileSync(file, 'utf8')) });
    }
  }
  return out;
}

/** Replaces `${NAME}` by the test's value for NAME. */
export function substitute(text: string, vars: Readonly<Record<string, string>> = {}): string {
  return text.replace(/\$\{([A-Z0-9_]+)\}/g, (whole, name: string) => vars[name] ?? whole);
}

/** CLI arguments for a fixture's variables. */
export function envArgs(expectation: FixtureExpectation, vars: Readonly<Record<string, string>> = {}): string[] {
  const args: string[] = [...(expectation.cliArgs ?? [])];
  for (const [k, v] of Object.entries(expectation.env ?? {})) args.push('--env', `${k}=${substitute(v, vars)}`);
  for (const [addon, vars] of Object.entries(expectation.addons ?? {})) {
    for (const [k, v] of Object.entries(vars)) args.push('--addon-env', `${addon}:${k}=${v}`);
  }
  if (expectation.type) args.push('--type', expectation.type);
  return args;
}

export interface CheckOptions {
  /** More CLI arguments, e.g. the address of a service the test started. */
  readonly extraArgs?: readonly string[];
  /** Values for `${NAME}` in the expectation's variables, output and notInOutput. */
  readonly vars?: Readonly<Record<string, string>>;
  /** Variables of the runplan process itself (e.g. how the host configures npm). */
  readonly cliEnv?: Readonly<Record<string, string>>;
}

/**
 * The fixture ready to deploy: when it uses shared files, a temporary copy of it
 * with them added. Deploying the same prepared fixture twice builds the same
 * application twice (as a rebuild does).
 */
export async function prepareFixture(fixture: Fixture): Promise<Fixture> {
  if (!fixture.expect.shared?.length) return fixture;
  const dir = join(await tempDir(`runplan-fixture-${fixture.name}-`), fixture.name);
  await cp(fixture.dir, dir, { recursive: true });
  for (const file of fixture.expect.shared) await cp(join(fixture.dir, '..', '_shared', file), join(dir, file));
  return { ...fixture, dir, expect: { ...fixture.expect, shared: [] } };
}

/**
 * Deploys a fixture for real with `runplan run` and checks it against its
 * expect.json: the HTTP answers while it runs, or the error when it must fail;
 * then that nothing of it is left running.
 */
export async function checkFixture(given: Fixture, options: CheckOptions = {}): Promise<string> {
  const fixture = await prepareFixture(given);
  const dirs = await deploymentDirs();
  const port = await freePort();
  const vars = options.vars ?? {};
  const run = startCli(['run', fixture.dir, '--port', String(port), ...envArgs(fixture.expect, vars), ...(options.extraArgs ?? [])], { ...dirs.env, ...options.cliEnv });
  try {
    if (fixture.expect.deploy === 'fails') {
      const code = await run.exited;
      expect(code, run.output()).toBe(fixture.expect.exitCode ?? 1);
      if (fixture.expect.errorCode) expect(run.stderr()).toContain(fixture.expect.errorCode);
    } else {
      await run.waitFor('==> deployment healthy');
      for (const request of fixture.expect.requests ?? []) {
        const answer = await get(`http://127.0.0.1:${port}${request.path}`, { ...request.headers });
        expect(answer.status, `GET ${request.path}: ${answer.body}`).toBe(request.status);
        if (request.json) expect(JSON.parse(answer.body), `GET ${request.path}`).toMatchObject(request.json);
        for (const [field, pattern] of Object.entries(request.match ?? {})) {
          expect(String(JSON.parse(answer.body)[field]), `GET ${request.path} field ${field}`).toMatch(new RegExp(pattern));
        }
        if (request.bodyIncludes) expect(answer.body, `GET ${request.path}`).toContain(request.bodyIncludes);
        for (const [name, value] of Object.entries(request.responseHeaders ?? {})) {
          expect(answer.headers[name.toLowerCase()], `GET ${request.path} header ${name}`).toBe(value);
        }
      }
      run.child.kill('SIGINT');
      expect(await run.exited, run.output()).toBe(0);
    }
    for (const line of fixture.expect.output ?? []) expect(run.output()).toContain(substitute(line, vars));
    for (const text of fixture.expect.notInOutput ?? []) expect(run.output()).not.toContain(substitute(text, vars));
    expect(processesUnder(dirs.workDir)).toEqual([]);
    return run.output();
  } finally {
    if (run.child.exitCode === null) {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }
}
