import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const HOST = resolve(import.meta.dirname, '..');
const SRC = join(HOST, 'src');
const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => join(SRC, f));
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function imports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => (m[1] ?? m[2]) as string);
}

/** runplan-host is a user of runplan like any platform: it reaches runplan through the package's entry points only. */
describe('runplan-host structure', () => {
  it('imports runplan only through its public entry points, and nothing else of this repository', () => {
    const entries = new Set(Object.keys((JSON.parse(readFileSync(join(HOST, '..', 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports).map((k) => k.replace(/^\./, 'runplan')));
    const offenders = files.flatMap((file) =>
      imports(file)
        .filter((spec) => {
          // The host's own dependencies (package.json), not runplan's.
          if (spec.startsWith('node:') || spec === 'better-sqlite3' || spec === 'pg' || spec === 'aws4' || spec === 'tar') return false;
          if (spec.startsWith('.')) return !resolve(dirname(file), spec).startsWith(`${SRC}/`);
          return !entries.has(spec);
        })
        .map((spec) => `${relative(HOST, file)}: ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('has no circular imports between its modules', () => {
    const graph = new Map(
      files.map((file) => [
        file,
        imports(file)
          .filter((s) => s.startsWith('.'))
          .map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts')),
      ]),
    );
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(' → '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });
});

/**
 * What sshd's forced command and git's proc-receive hook run (src/git/git-main.ts,
 * bundled as dist/git-program.cjs) starts twice per push: of runplan it loads only
 * `runplan/process/attached`, which imports nothing but Node.js; the other entry
 * points bring zod, yaml and execa (1.8 MB to parse at each start). Type imports
 * are erased and allowed.
 */
describe('the git program', () => {
  it('imports nothing of runplan at run time but runplan/process/attached, through any of its modules', () => {
    const seen = new Set<string>();
    const runtimeImports: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?[^;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
        const spec = (m[3] ?? m[4]) as string;
        if (m[2] !== undefined) continue;
        if (spec.startsWith('.')) visit(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
        else if ((spec === 'runplan' || spec.startsWith('runplan/')) && spec !== 'runplan/process/attached') runtimeImports.push(`${relative(HOST, file)}: ${spec}`);
      }
    };
    visit(join(SRC, 'git', 'git-main.ts'));
    expect(seen.size).toBeGreaterThan(5);
    expect(runtimeImports).toEqual([]);
  });
});
