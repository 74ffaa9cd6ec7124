import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { appendFile, lstat, mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { defaultRegistry } from '../../src/compose/default-registry.js';
import { secretReason } from '../../src/env/secrets.js';
import { ROOT, runCli, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { appFilesCases } from './cases/app-files.js';
import { coreCases } from './cases/core.js';
import { nodeCases } from './cases/node.js';
import { play1Cases } from './cases/play1.js';
import { rubyCases } from './cases/ruby.js';
import { BASE_APPS, type BadInputCase, type Entry, HOST_MARKERS, MARKER_NEEDLES, MARKER_VARIABLES, SENTINEL_CONTENT, SENTINEL_NEEDLE, SSH_KEY } from './corpus.js';

/**
 * Runs the bad-input corpus (test/bad-input/cases/) through the real executable.
 * Every case must give its expected exit status and code, and keep the
 * invariants of any input: no crash (exit 0, 1 or 2 only), no stack trace, every
 * error line coded, no secret and no host file's content in the output, bounded
 * output without raw control characters, nothing written outside the
 * application, runplan's cache and work directories. Plans come from the golden
 * inventory: no program runs, no connection is opened.
 */
const CASES: readonly BadInputCase[] = [...nodeCases, ...rubyCases, ...play1Cases, ...coreCases, ...appFilesCases];

const INVENTORY = join(ROOT, 'test', 'golden', 'inventory.json');
const MAX_OUTPUT_BYTES = 64 * 1024;
// Two shared cores: more CLI processes at once only make each slower.
const PARALLEL = 4;
// Two suites on two cores stretch a 3 s case past 20 s; the limit catches hangs, not slowness.
const CASE_TIMEOUT_MS = 45_000;
// A build case installs its dependencies with the real npm: on a loaded machine 45 s was seen to cut two short.
const BUILD_CASE_TIMEOUT_MS = 150_000;
/** Host settings the golden plans use: planning depends on the inventory only. */
const HOST_ENV = { RUNPLAN_RUBY_DEFAULT_SERIES: '', RUNPLAN_RUBY_GEM_SOURCE: 'local', RUNPLAN_PLAY1_DEFAULT_VERSION: '', ...HOST_MARKERS };

let root = '';
let savedPlan: Record<string, unknown> | undefined;

/** A host file, a host directory and an empty one a write could land in. */
const SENTINEL_FILES: Readonly<Record<string, Entry>> = {
  'host-file': SENTINEL_CONTENT,
  'host-dir': { dir: { 'inner.txt': SENTINEL_CONTENT, 'index.html': SENTINEL_CONTENT } },
  writable: { dir: true },
};

/** Every entry under `dir`: type, mode, size, content digest or link target; a change anywhere changes the text. */
async function snapshot(dir: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const name of (await readdir(d)).sort()) {
      const p = join(d, name);
      const s = await lstat(p);
      if (s.isSymbolicLink()) lines.push(`${p} link ${await readlink(p)}`);
      else if (s.isDirectory()) {
        lines.push(`${p} dir ${s.mode}`);
        await walk(p);
      } else if (s.isFile())
        lines.push(
          `${p} file ${s.mode} ${s.size} ${createHash('sha256')
            .update(await readFile(p))
            .digest('hex')}`,
        );
      else lines.push(`${p} other ${s.mode}`);
    }
  };
  await walk(dir);
  return lines.join('\n');
}

async function listAll(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) out.push(join(e.parentPath, e.name));
  return out;
}

function fill(text: string, vars: Record<string, string>): string {
  return text.replace(/\{(app|case|sentinel|plan|inventory)\}/g, (_, k: string) => vars[k] as string);
}

async function materialise(dir: string, entries: Readonly<Record<string, Entry>>, vars: Record<string, string>): Promise<void> {
  for (const [name, entry] of Object.entries(entries)) {
    const p = join(dir, name);
    await rm(p, { recursive: true, force: true });
    if (entry === null) continue;
    await mkdir(dirname(p), { recursive: true });
    if (typeof entry === 'function') await writeFile(p, entry());
    else if (typeof entry === 'string' || Buffer.isBuffer(entry)) await writeFile(p, typeof entry === 'string' ? fill(entry, vars) : entry);
    else if ('link' in entry) await symlink(fill(entry.link, vars), p);
    else if ('dir' in entry) {
      await mkdir(p, { recursive: true });
      if (entry.dir !== true) await materialise(p, entry.dir, vars);
    } else execFileSync('mkfifo', [p]);
  }
}

/** The saved plan tampered cases start from: the node base app's, with NPM_TOKEN (a secret) by name. */
async function basePlan(): Promise<Record<string, unknown>> {
  if (savedPlan) return savedPlan;
  const app = join(root, 'plan-source');
  await materialise(app, BASE_APPS.node, {});
  const r = await runCli(['plan', app, '--inventory', INVENTORY, '--json', '--env', 'NPM_TOKEN'], { ...HOST_ENV, NPM_TOKEN: 'x' });
  expect(r.code, r.output).toBe(0);
  savedPlan = JSON.parse(r.stdout) as Record<string, unknown>;
  return savedPlan;
}

/** Runs one case; returns what the invariants and the expectation are checked on. */
async function runCase(c: BadInputCase) {
  const caseDir = join(root, c.id);
  const app = join(caseDir, 'app');
  const home = join(caseDir, 'home');
  const tmp = join(caseDir, 'tmp');
  for (const d of [app, home, tmp]) await mkdir(d, { recursive: true });
  // The case's own "host" directory, which its links point to: never shown, never changed.
  const sentinel = join(caseDir, 'host');
  await materialise(sentinel, SENTINEL_FILES, {});
  const sentinelBefore = await snapshot(sentinel);
  const vars = { app, case: caseDir, sentinel, plan: join(caseDir, 'plan.json'), inventory: INVENTORY };
  if (c.base !== 'empty') await materialise(app, BASE_APPS[c.base], vars);
  await materialise(app, c.files ?? {}, vars);
  await materialise(caseDir, c.outside ?? {}, vars);
  if (c.plan) {
    const tampered = c.plan(structuredClone(await basePlan()));
    await writeFile(vars.plan, typeof tampered === 'string' ? tampered : JSON.stringify(tampered));
  }

  const own = new Set([...Object.keys(c.env ?? {})]);
  const markerArgs: string[] = [];
  if (c.markers !== false) {
    const lines = Object.entries(MARKER_VARIABLES)
      .filter(([k]) => !own.has(k))
      .map(([k, v]) => (v === SSH_KEY ? `${k}="${v}"` : `${k}=${v}`));
    await writeFile(join(caseDir, 'markers.env'), `${lines.join('\n')}\n`);
    markerArgs.push('--app-env-file', join(caseDir, 'markers.env'));
  }
  // Secrets as a host should give them: in runplan's environment, named by --env NAME (a value in the arguments is warned of).
  const secretNames = new Set(defaultRegistry().secretVariables());
  const inEnvironment = Object.entries(c.env ?? {}).filter(([k, v]) => secretReason(k, v, secretNames) !== undefined);
  const envArgs = Object.entries(c.env ?? {}).flatMap(([k, v]) => ['--env', inEnvironment.some(([n]) => n === k) ? k : `${k}=${fill(v, vars)}`]);
  const extra = (c.args ?? []).map((a) => fill(a, vars));
  const command = c.command ?? 'plan';
  // Builds use the test run's shared cache (runtimes already downloaded) and a work directory of their own.
  const dirs = ['--cache-dir', inject('sharedCacheDir'), '--work-dir', join(caseDir, 'work')];
  const args =
    command === 'raw'
      ? extra
      : command === 'build'
        ? ['build', app, ...(extra.includes('--plan') ? [] : ['--inventory', INVENTORY]), ...dirs, ...markerArgs, ...envArgs, ...extra]
        : ['plan', app, '--inventory', INVENTORY, ...(command === 'plan-json' ? ['--json'] : []), ...markerArgs, ...envArgs, ...extra];
  const hostEnv = { ...HOST_ENV, HOME: home, TMPDIR: tmp, XDG_CACHE_HOME: join(home, '.cache'), ...Object.fromEntries(inEnvironment), ...(c.hostEnv ?? {}) };
  const run = startCli(args, Object.fromEntries(Object.entries(hostEnv).map(([k, v]) => [k, fill(v, vars)])));
  // A hang (a FIFO read, a lock never released) is a failure too: killed after CASE_TIMEOUT_MS, it exits with no status.
  const timer = setTimeout(() => run.child.kill('SIGKILL'), command === 'build' ? BUILD_CASE_TIMEOUT_MS : CASE_TIMEOUT_MS);
  const code = await run.exited;
  clearTimeout(timer);
  return { code, output: run.output(), vars, home, tmp, command, sentinel, sentinelBefore, argBytes: Buffer.byteLength([...envArgs, ...extra].join('')) };
}

/**
 * What people read of a case's outcome: each coded error as the CLI renders it
 * (with its file, variable and fix lines) and the plan's warnings, with what
 * differs between runs and machines replaced: the case's directories, the test
 * run's temporary root, runplan's checkout and the shared cache. Empty when the
 * case was accepted without a code.
 */
function renderedOutcome(out: string, r: Awaited<ReturnType<typeof runCase>>): string {
  const lines = out.split('\n');
  const shown: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (/^error RUNPLAN_E_/.test(line)) {
      // Up to its fix line: a message may hold line breaks of its own.
      let end = i;
      while (end + 1 < lines.length && !/^ {2}fix: /.test(lines[end] as string)) end++;
      shown.push(...lines.slice(i, end + 1));
      i = end;
    } else if (line === 'Warnings') {
      shown.push(line);
      while (i + 1 < lines.length && /^( {2}RUNPLAN_W_| {4}fix: )/.test(lines[i + 1] as string)) shown.push(lines[++i] as string);
    }
  }
  const places: [string, string][] = [
    [r.vars.app, '<app>'],
    [r.vars.case, '<case>'],
    [root, '<tmp>'],
    [inject('sharedCacheDir'), '<cache>'],
    [ROOT, '<runplan>'],
  ];
  // A path quoted as a cut excerpt ("/tmp/runplan-bad-input-x…" or "/tmp/runplan-bad-input-x"…) is cut elsewhere under
  // another TMPDIR: replaced before the directories below are named, which would hide where it starts.
  // The cut may fall inside the temporary directory's own name.
  const cutTemporary = /"(\/[^"]*)(…"|"…)( \(and \d+ more characters\))?/g;
  const temporary = dirname(root);
  let text = shown.join('\n').replace(cutTemporary, (whole, path: string) => (path.startsWith(`${temporary}/`) || `${temporary}/`.startsWith(path) ? '"<temporary path>…"' : whole));
  for (const [path, name] of places) text = text.split(path).join(name);
  return (
    text
      // The work directory of an application is named after the digest of its path.
      .replace(/(<case>\/\S*?\/app)-[0-9a-f]{12}\b/g, '$1-<digest>')
  );
}

async function checkCase(c: BadInputCase, pinRendered?: (rendered: string) => void): Promise<void> {
  const r = await runCase(c);
  const out = r.output;
  // RUNPLAN_CORPUS_REPORT=FILE: every case's outcome, one JSON line each, for reviewing expectations.
  if (process.env.RUNPLAN_CORPUS_REPORT) {
    const codes = [...new Set(out.match(/RUNPLAN_[EW]_[A-Z0-9_]+/g) ?? [])];
    await appendFile(process.env.RUNPLAN_CORPUS_REPORT, `${JSON.stringify({ id: c.id, expected: c.expect, exit: r.code, codes, head: out.slice(0, 300) })}\n`);
  }
  const shown = `${c.id}: exit ${r.code}\n${out.slice(0, 4000)}`;
  // No crash: 0 accepted, 1 failed deployment, 2 bad input; never 70 (internal error) or a signal.
  expect([0, 1, 2], shown).toContain(r.code);
  expect(out, `${shown}\n(a stack trace was shown)`).not.toMatch(/^\s+at .+[(:]\d+|node:internal|internal error/m);
  // Every error line is coded, and a refusal names its code.
  for (const line of out.split('\n').filter((l) => /^\s*(error|Error)\b/.test(l))) expect(line, shown).toMatch(/^error RUNPLAN_E_[A-Z0-9_]+: /);
  if (r.code !== 0) expect(out, shown).toMatch(/RUNPLAN_E_[A-Z0-9_]+/);
  // Nothing secret, nothing of the host.
  for (const needle of [...MARKER_NEEDLES, ...(c.secrets ?? []), SENTINEL_NEEDLE]) expect(out.includes(needle), `${shown}\n(shows ${needle})`).toBe(false);
  // Bounded output without raw terminal control characters. An accepted plan shows the
  // variables and arguments it was given, so those may add their own size; files may not.
  expect(Buffer.byteLength(out), shown).toBeLessThan(MAX_OUTPUT_BYTES + 2 * r.argBytes);
  expect(out, `${shown}\n(raw control characters)`).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u009b]/);
  // Nothing written outside the application and the cache and work directories it was given.
  expect(await snapshot(r.sentinel), `${c.id} changed the host directory links point to`).toBe(r.sentinelBefore);
  expect(await listAll(r.tmp), `${c.id} wrote into TMPDIR`).toEqual([]);
  if (r.command !== 'build') expect(await listAll(r.home), `${c.id} wrote into HOME`).toEqual([]);
  // The expected outcome.
  expect(r.code, shown).toBe(c.expect.exit);
  if (c.expect.code) expect(out, shown).toContain(c.expect.code.startsWith('RUNPLAN_E_') ? `error ${c.expect.code}` : c.expect.code);
  else if (c.expect.exit === 0) expect(out, `${shown}\n(accepted cases warn of nothing)`).not.toMatch(/RUNPLAN_[EW]_/);
  for (const text of c.expect.includes ?? []) expect(out, shown).toContain(fill(text, r.vars));
  for (const text of c.expect.excludes ?? []) expect(out, shown).not.toContain(fill(text, r.vars));
  // The message people read, pinned: a change of wording shows in the review of __snapshots__/.
  const rendered = renderedOutcome(out, r);
  if (rendered !== '') pinRendered?.(rendered);
}

beforeAll(async () => {
  root = await tempDir('runplan-bad-input-');
});

describe('bad-input corpus', () => {
  it('has at least 200 cases with unique ids, each naming its outcome', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(200);
    const ids = CASES.map((c) => c.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    for (const c of CASES) expect(c.id).toMatch(/^[a-z0-9][a-z0-9-]*$/);
  });

  describe.concurrent.each(['node', 'ruby', 'play1', 'core', 'app-files'] as const)('%s', (area) => {
    for (const c of CASES.filter((x) => x.area === area)) {
      const name = `${c.id} → ${c.expect.code ?? (c.expect.exit === 0 ? 'accepted' : `exit ${c.expect.exit}`)}`;
      if (c.pending) it.fails(`${name} [pending: ${c.pending}]`, () => limit(() => checkCase(c)));
      else it(name, ({ expect: local }) => limit(() => checkCase(c, (rendered) => local(rendered).toMatchSnapshot())));
    }
  });
});

/** At most PARALLEL cases at once, across areas. */
let running = 0;
const waiting: Array<() => void> = [];
async function limit<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= PARALLEL) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}
