import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { readExportList } from '../helpers/public-api.js';

/** Every relative import of the TypeScript sources under `dir`: [importing file, imported file], both relative to the root. */
function imports(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^;]*?from '(\.{1,2}\/[^']+)'/gms)) {
      out.push([relative(ROOT, file), relative(ROOT, resolve(dirname(file), m[1] as string))]);
    }
  }
  return out;
}

const SRC = imports('src');
const inFolder = (path: string, folder: string) => path.startsWith(`${folder}/`);

/** How an executor carries a plan out: no name of these is the root's, but through the kit (src/kit/index.ts). */
const EXECUTOR_INTERNALS = ['src/engines', 'src/building', 'src/process', 'src/health', 'src/env', 'src/cli'];

/** The embedded default engine: the one module of an engine the root re-exports (LocalExecutor, buildApp, deployApp). */
const LOCAL_EXECUTOR = 'src/engines/local/local-executor.ts';

/** The names the TypeScript files under `dir` declare with `export`: name -> the files declaring it. */
function declaredNames(dir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    for (const m of readFileSync(file, 'utf8').matchAll(/^export (?:declare )?(?:abstract )?(?:async )?(?:function|class|const|let|interface|type|enum) (\w+)/gm)) {
      out.set(m[1] as string, [...(out.get(m[1] as string) ?? []), relative(ROOT, file)]);
    }
  }
  return out;
}

/**
 * The shape the design promises (issue 13, item 5), checked on every run: the
 * core knows no buildpack but in the composition layer, and building and running
 * share what they both need through src/process/ instead of importing each other.
 */
describe('import direction', () => {
  it('the core imports no buildpack: only the composition layer does (src/index.ts, src/compose/)', () => {
    const composition = (path: string) => path === 'src/index.ts' || inFolder(path, 'src/compose');
    expect(SRC.filter(([from, to]) => inFolder(to, 'buildpacks') && !composition(from))).toEqual([]);
  });

  it('the core imports nothing of the composition layer but the CLI, which sits above it', () => {
    const above = (path: string) => path === 'src/index.ts' || inFolder(path, 'src/compose') || inFolder(path, 'src/cli');
    expect(SRC.filter(([from, to]) => above(to) && !above(from))).toEqual([]);
  });

  it("the buildpacks reach the core only through the kit (runplan/buildpack, src/kit/index.ts), as a host's buildpack does", () => {
    const bp = imports('buildpacks');
    expect(bp.filter(([, to]) => inFolder(to, 'src') && to !== 'src/kit/index.js')).toEqual([]);
  });

  it('building and running do not import each other: src/building imports no engine, and the local run phase (src/engines/local/ but the executor joining the two) no src/building', () => {
    const localRunPhase = (path: string) => inFolder(path, 'src/engines/local') && path !== LOCAL_EXECUTOR;
    expect(SRC.filter(([from, to]) => (inFolder(from, 'src/building') && inFolder(to, 'src/engines')) || (localRunPhase(from) && inFolder(to, 'src/building')))).toEqual([]);
  });

  it('the shared layers (src/process, src/lowering, src/plan, src/errors, src/env, src/files, src/log) import none of build, the executor, the engines or cli', () => {
    const shared = ['src/process', 'src/lowering', 'src/plan', 'src/errors', 'src/env', 'src/files', 'src/log'];
    const above = ['src/building', 'src/executor', 'src/engines', 'src/cli'];
    expect(SRC.filter(([from, to]) => shared.some((f) => inFolder(from, f)) && above.some((f) => inFolder(to, f)))).toEqual([]);
  });

  it('the engines reach the deploy flow through src/executor: no other engine imports the local one (src/engines/local/)', () => {
    expect(SRC.filter(([from, to]) => inFolder(from, 'src/engines') && !inFolder(from, 'src/engines/local') && inFolder(to, 'src/engines/local'))).toEqual([]);
  });

  it('src/executor (the contract, the deploy flow, the health gate) imports no executor: neither src/engines nor src/cli', () => {
    expect(SRC.filter(([from, to]) => inFolder(from, 'src/executor') && ['src/engines', 'src/cli'].some((f) => inFolder(to, f)))).toEqual([]);
  });

  it('the root entry (src/index.ts) re-exports no module of an executor, the CLI or a buildpack: the engines and buildpacks are entries of their own', () => {
    const internal = (to: string) => to !== LOCAL_EXECUTOR.replace(/\.ts$/, '.js') && [...EXECUTOR_INTERNALS, 'buildpacks'].some((f) => inFolder(to, f));
    expect(SRC.filter(([from, to]) => from === 'src/index.ts' && internal(to))).toEqual([]);
  });

  it("the root's reviewed export list (api/exports.txt) holds no executor internal: beside the kit's names, none is declared under src/engines (but the embedded local executor), src/building, src/process, src/health, src/env or src/cli", () => {
    const list = readExportList();
    const names = (entry: string) => new Set((list[entry] ?? []).map((line) => line.split(' ')[0] as string));
    const kit = names('runplan/buildpack');
    const declared = new Map(EXECUTOR_INTERNALS.flatMap((dir) => [...declaredNames(dir)].filter(([, files]) => !files.includes(LOCAL_EXECUTOR))));
    const internals = [...names('runplan')].filter((name) => !kit.has(name) && declared.has(name)).map((name) => `${name} (${declared.get(name)?.join(', ')})`);
    expect(internals).toEqual([]);
    // What issue 23 found exported from the root, by name.
    for (const name of [
      'formatPlan',
      'carryOutInstall',
      'ensureTree',
      'restartDelay',
      'renderEntrypoint',
      'IMAGE_BINDINGS',
      'DockerCli',
      'DockerRunner',
      'deployToDocker',
      'healthError',
      'redactError',
      'StepBuilder',
      'LocalProcessRunner',
    ])
      expect(names('runplan').has(name), name).toBe(false);
  });

  it('only the program runner (src/process/run-program.ts) starts programs: no other module of runplan or of runplan-host (host/src) imports node:child_process or execa', () => {
    // Supervised processes live as long as the deployment and keep their own spawn() (their comment says why).
    // runplan-host starts every program through runplan/process, its servers (sshd, Caddy, add-on servers) included.
    // runplan/process/attached (src/process/attached-program.ts) runs a program on the caller's streams and imports nothing but Node.js: runplan-host's git program, started at every push, bundles it alone.
    const allowed = new Set(['src/process/run-program.ts', 'src/engines/local/supervised-process.ts', 'src/process/attached-program.ts']);
    const spawning = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](?:node:)?(?:child_process|execa)['"]/m;
    const offenders = ['src', 'buildpacks', 'host/src'].flatMap((dir) =>
      readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
        .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
        .filter((file) => !allowed.has(file) && spawning.test(readFileSync(join(ROOT, file), 'utf8'))),
    );
    expect(offenders).toEqual([]);
    // The rule itself sees each form an import takes.
    for (const form of ["import { spawn } from 'node:child_process';", 'const { execa } = await import("execa");', "import 'child_process';", "const cp = require('child_process');"]) {
      expect(spawning.test(form), form).toBe(true);
    }
  });

  it("runplan/process/attached imports nothing but Node.js, so a program bundling it stays small (the host's git program)", () => {
    const text = readFileSync(join(ROOT, 'src/process/attached-entry.ts'), 'utf8') + readFileSync(join(ROOT, 'src/process/attached-program.ts'), 'utf8');
    const specs = [...text.matchAll(/\bfrom\s*['"]([^'"]+)['"]/g)].map((m) => m[1] as string);
    expect(specs.filter((spec) => !spec.startsWith('node:') && spec !== './attached-program.js')).toEqual([]);
  });

  it('a buildpack imports no other buildpack', () => {
    const bp = imports('buildpacks');
    const own = (path: string) => path.split('/')[1];
    expect(bp.filter(([from, to]) => inFolder(to, 'buildpacks') && own(from) !== own(to))).toEqual([]);
  });

  it('has no cycle between folders (src/<area>, buildpacks/<id>): each folder is a layer', () => {
    const folderOf = (path: string) => path.split('/').slice(0, 2).join('/');
    const edges = new Map<string, Set<string>>();
    for (const [from, to] of [...SRC, ...imports('buildpacks')]) {
      const [a, b] = [folderOf(from), folderOf(to)];
      // Files directly in src/ (index.ts, version.ts) are not a folder.
      if (a === b || a.endsWith('.ts') || b.endsWith('.js') || b.endsWith('.ts')) continue;
      edges.set(a, (edges.get(a) ?? new Set()).add(b));
    }
    const reaches = (from: string, target: string, seen = new Set<string>()): boolean =>
      [...(edges.get(from) ?? [])].some((next) => {
        if (next === target) return true;
        if (seen.has(next)) return false;
        seen.add(next);
        return reaches(next, target, seen);
      });
    const cycles = [...edges].flatMap(([a, targets]) => [...targets].filter((b) => reaches(b, a)).map((b) => `${a} -> ${b} -> … -> ${a}`));
    expect(cycles).toEqual([]);
  });
});
