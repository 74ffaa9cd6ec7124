/**
 * The bad-input corpus: hostile or broken applications, variables, options and
 * saved files, each with the outcome runplan must give. Cases are data (one table
 * per area under cases/); test/bad-input/bad-input.test.ts runs every one through
 * the real CLI and checks, besides the expected outcome, the invariants every
 * input must keep (see docs/security.md, "Bad-input corpus").
 */

/** File content; a function makes big or binary content at run time instead of committing it. */
type Content = string | Buffer | (() => string | Buffer);

/**
 * One entry of an application (or of the case's directory outside it):
 * content, a symbolic link (`{sentinel}`, `{app}`, `{case}` are replaced in its target),
 * a directory (with entries, or empty), a FIFO, or `null` to remove the base app's file.
 */
export type Entry = Content | { link: string } | { dir: Record<string, Entry> | true } | { fifo: true } | null;

export type Area = 'node' | 'ruby' | 'play1' | 'core' | 'app-files';

export type Base = 'node' | 'ruby' | 'play1' | 'empty';

interface Expectation {
  /** The exit status: 0 accepted, 1 a failed deployment, 2 bad input. */
  readonly exit: 0 | 1 | 2;
  /** The RUNPLAN_E_… error or RUNPLAN_W_… warning the output must name; none: accepted without a code. */
  readonly code?: string;
  /** Text the output must hold (after `{app}`… are replaced). */
  readonly includes?: readonly string[];
  /** Text the output must not hold. */
  readonly excludes?: readonly string[];
}

export interface BadInputCase {
  /** Unique, kebab-case; shown as the test's name. */
  readonly id: string;
  readonly area: Area;
  /** The minimal application the case starts from (corpus base apps below). */
  readonly base: Base;
  /** Files of the application, over the base's. */
  readonly files?: Readonly<Record<string, Entry>>;
  /** Files in the case's own directory, outside the application (`{case}/…`): env files, plans, inventories. */
  readonly outside?: Readonly<Record<string, Entry>>;
  /**
   * Application variables: those runplan takes for secrets given as `--env NAME` with the value in
   * runplan's own environment, as the docs say to (never in the arguments), the others as `--env NAME=VALUE`.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** runplan's own process environment (host settings such as RUNPLAN_RUBY_DEFAULT_SERIES). */
  readonly hostEnv?: Readonly<Record<string, string>>;
  /** The command; `plan` (default) and `plan --json` plan from the golden inventory. */
  readonly command?: 'plan' | 'plan-json' | 'build' | 'raw';
  /** Extra arguments (after the app directory; for `raw`, all arguments). */
  readonly args?: readonly string[];
  /** A saved plan to write as `{case}/plan.json`: made from the base app's plan (node, NPM_TOKEN a secret). */
  readonly plan?: (plan: Record<string, unknown>) => unknown;
  /** Secret values of this case, besides the corpus markers: none may appear in any output. */
  readonly secrets?: readonly string[];
  /** false: no marker secrets are given (a saved plan refuses variables it does not have). */
  readonly markers?: false;
  readonly expect: Expectation;
  /** "<finding> <why>": the case fails until a fix lands elsewhere; it runs as an expected failure. */
  readonly pending?: string;
}

export const BASE_APPS: Readonly<Record<Base, Readonly<Record<string, string>>>> = {
  node: {
    'package.json': `${JSON.stringify({ name: 'corpus-app', version: '1.0.0', scripts: { start: 'node server.js' } }, null, 2)}\n`,
    'server.js': "require('node:http').createServer((q, s) => s.end('ok')).listen(process.env.PORT);\n",
    '.gitignore': '/node_modules\n',
  },
  ruby: {
    Gemfile: "source 'https://rubygems.org'\nruby '3.1.7'\ngem 'puma'\ngem 'rack'\n",
    'Gemfile.lock': [
      'GEM',
      '  remote: https://rubygems.org/',
      '  specs:',
      '    puma (6.4.0)',
      '    rack (3.0.0)',
      '',
      'PLATFORMS',
      '  ruby',
      '',
      'DEPENDENCIES',
      '  puma',
      '  rack',
      '',
      'BUNDLED WITH',
      '   2.4.0',
      '',
    ].join('\n'),
    'config.ru': "run ->(env) { [200, { 'content-type' => 'text/plain' }, ['ok']] }\n",
  },
  play1: {
    'conf/application.conf': 'application.name=corpus\n%platform.XForwardedSupport=all\n',
    'conf/routes': 'GET / Application.index\n',
    'platform/play1_version': '1.9\n',
  },
  empty: {},
};

/** A SSH-key-shaped secret of 40 lines; output is printed line by line, so each line is a needle. */
const SSH_KEY_LINES = Array.from({ length: 40 }, (_, i) => `b3BlbnNzaC1rZXktdjEAAAAACmNvcnB1c0tleUxpbmU${String(i).padStart(4, '0')}`);
export const SSH_KEY = ['-----BEGIN OPENSSH PRIVATE KEY-----', ...SSH_KEY_LINES, '-----END OPENSSH PRIVATE KEY-----'].join('\n');

/** Application variables every case is given (unless it sets the same name itself or has markers: false). */
export const MARKER_VARIABLES: Readonly<Record<string, string>> = {
  NPM_TOKEN: 'npm_corpus_marker_token_3b7e1f',
  CC_HTTP_BASIC_AUTH: 'corpususer:corpus_basic_pw_a41c',
  DATABASE_URL: 'postgres://db:corpus_db_pw_9e2d@db.internal:5432/app',
  DEPLOY_SSH_PRIVATE_KEY: SSH_KEY,
};

/** Secrets of the host running runplan (its own environment): never an application's, never printed. */
export const HOST_MARKERS: Readonly<Record<string, string>> = {
  AWS_SECRET_ACCESS_KEY: 'host_corpus_aws_secret_6d0b',
  RUNPLAN_CORPUS_HOST_TOKEN: 'host_corpus_token_c58a',
};

/** What must never appear in any output. */
export const MARKER_NEEDLES: readonly string[] = ['npm_corpus_marker_token_3b7e1f', 'corpus_basic_pw_a41c', 'corpus_db_pw_9e2d', ...SSH_KEY_LINES, ...Object.values(HOST_MARKERS)];

/** The content of the host files that applications link to: never printed, never changed. */
export const SENTINEL_CONTENT = 'root:x:0:0:corpus-sentinel-host-file-5f1e:/root:/bin/bash\n';
export const SENTINEL_NEEDLE = 'corpus-sentinel-host-file-5f1e';

/** Helpers for tables. */
export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
export const pkg = (fields: Record<string, unknown>): string => json({ name: 'corpus-app', version: '1.0.0', scripts: { start: 'node server.js' }, ...fields });
export const pkgRaw = (fields: Record<string, unknown>): string => json({ name: 'corpus-app', version: '1.0.0', ...fields });
/** `n` bytes of `unit` repeated, made when the case runs. */
export const big = (unit: string, n: number) => () => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
/** Binary noise (deterministic), made when the case runs. */
export const binary = (n: number) => () => {
  const b = Buffer.alloc(n);
  let x = 2463534242;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
};
const ESC = '\u001b';
export const TERMINAL_ATTACK = `${ESC}[2J${ESC}]0;pwned${String.fromCharCode(7)}${ESC}[31m`;

/** A row of an area's table: the area and (by default) the base app come from the table. */
export type CaseRow = Omit<BadInputCase, 'area' | 'base'> & { readonly base?: Base };

export function inArea(area: Area, base: Base, rows: readonly CaseRow[]): BadInputCase[] {
  return rows.map((row) => ({ ...row, area, base: row.base ?? base }));
}
