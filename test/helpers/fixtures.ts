import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

/** What a fixture app must do, kept beside it in expect.json. */
export interface FixtureExpectation {
  /** The rule of the specification the fixture proves. */
  readonly rule: string;
  readonly type?: string;
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
