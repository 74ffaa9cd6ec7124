import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ROOT, startCli } from './cli.js';
import { get } from './http.js';
import { freePort } from './ports.js';
import { processesUnder } from './processes.js';
import { deploymentDirs } from './temp.js';

/** What a fixture app must do, kept beside it in expect.json. */
export interface FixtureExpectation {
  /** The rule of the specification the fixture proves. */
  readonly rule: string;
  readonly type?: string;
  /** Application variables. */
  readonly env?: Readonly<Record<string, string>>;
  /** Variables of linked add-ons, by add-on name. */
  readonly addons?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** The instance size the host declares (--cpus, --memory). */
  readonly host?: { readonly cpus?: number; readonly memory?: string };
  /** Variables of the runplan process itself: host-level settings, never the application's. */
  readonly runplanEnv?: Readonly<Record<string, string>>;
  /** Services the test must start first (e.g. "redis"); their addresses fill ${…} placeholders. */
  readonly services?: readonly string[];
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

/** Replaces ${NAME} in a value by what the test provides (e.g. the port of a redis-server it started). */
export function substitute(value: string, vars: Readonly<Record<string, string>>): string {
  return value.replace(/\$\{([A-Z0-9_]+)\}/g, (whole, name: string) => vars[name] ?? whole);
}

/** CLI arguments for a fixture's variables and host settings. */
export function envArgs(expectation: FixtureExpectation, vars: Readonly<Record<string, string>> = {}): string[] {
  const args: string[] = [];
  for (const [k, v] of Object.entries(expectation.env ?? {})) args.push('--env', `${k}=${substitute(v, vars)}`);
  for (const [addon, variables] of Object.entries(expectation.addons ?? {})) {
    for (const [k, v] of Object.entries(variables)) args.push('--addon-env', `${addon}:${k}=${substitute(v, vars)}`);
  }
  if (expectation.type) args.push('--type', expectation.type);
  if (expectation.host?.cpus !== undefined) args.push('--cpus', String(expectation.host.cpus));
  if (expectation.host?.memory !== undefined) args.push('--memory', expectation.host.memory);
  return args;
}

export interface CheckOptions {
  /** More CLI arguments, e.g. the address of a service the test started. */
  readonly extraArgs?: readonly string[];
  /** Values for ${NAME} placeholders of env and addons (e.g. REDIS_PORT). */
  readonly vars?: Readonly<Record<string, string>>;
  /** More variables for the runplan process (host-level settings). */
  readonly runplanEnv?: Readonly<Record<string, string>>;
}

/**
 * Deploys a fixture for real with `runplan run` and checks it against its
 * expect.json: the HTTP answers while it runs, or the error when it must fail;
 * then that nothing of it is left running.
 */
export async function checkFixture(fixture: Fixture, options: CheckOptions = {}): Promise<string> {
  const dirs = await deploymentDirs();
  const port = await freePort();
  const run = startCli(['run', fixture.dir, '--port', String(port), ...envArgs(fixture.expect, options.vars), ...(options.extraArgs ?? [])], {
    ...dirs.env,
    ...options.runplanEnv,
    ...fixture.expect.runplanEnv,
  });
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
        if (request.bodyIncludes) expect(answer.body, `GET ${request.path}`).toContain(request.bodyIncludes);
        for (const [name, value] of Object.entries(request.responseHeaders ?? {})) {
          expect(answer.headers[name.toLowerCase()], `GET ${request.path} header ${name}`).toBe(value);
        }
      }
      run.child.kill('SIGINT');
      expect(await run.exited, run.output()).toBe(0);
    }
    for (const line of fixture.expect.output ?? []) expect(run.output()).toContain(line);
    for (const text of fixture.expect.notInOutput ?? []) expect(run.output()).not.toContain(text);
    expect(processesUnder(dirs.workDir)).toEqual([]);
    return run.output();
  } finally {
    if (run.child.exitCode === null) {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }
}
