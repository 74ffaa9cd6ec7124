import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNPLAN_VERSION } from '../../src/version.js';
import { ROOT } from '../helpers/cli.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('code structure', () => {
  it('has no circular imports in src/ and buildpacks/', () => {
    const files = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'buildpacks'))];
    const graph = new Map<string, string[]>();
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const deps = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)]
        .filter((m) => !/^import\s+type\s/.test(m[0]) && !/^export\s+type\s/.test(m[0]))
        .map((m) => resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts')));
      graph.set(file, deps);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, stack: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...stack.slice(stack.indexOf(file)), file].map((f) => relative(ROOT, f)).join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const dep of graph.get(file) ?? []) visit(dep, [...stack, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('passes the linter and the formatter (biome check, configured in biome.json)', () => {
    const biome = join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
    const run = spawnSync(biome, ['check', '--colors=off', '.'], { cwd: ROOT, encoding: 'utf8' });
    // `npm run format` rewrites the files; `npx biome lint --write .` applies the safe lint fixes.
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  });

  it('has no dead code: every file, export and dependency is used (knip, configured in knip.jsonc)', () => {
    const knip = join(ROOT, 'node_modules', 'knip', 'bin', 'knip.js');
    const run = spawnSync(process.execPath, [knip, '--no-progress', '--include', 'files,dependencies,unlisted,binaries,unresolved,exports,types,duplicates,cycles'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    // `npx knip --fix --fix-type exports,types` removes the export keyword of what nothing imports.
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  }, 120_000);

  it('keeps the version in plans equal to package.json', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(RUNPLAN_VERSION).toBe(pkg.version);
  });

  it("never writes the package registry's host name into code, docs or fixtures", () => {
    // The host is whatever npm is configured with here, read at run time like runplan does.
    const host = new URL(execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim()).host;
    const roots = ['src', 'buildpacks', 'docs', 'fixtures', 'test', 'bench', 'scripts', 'README.md'].map((p) => join(ROOT, p));
    const offenders: string[] = [];
    const scan = (path: string) => {
      if (path.includes('node_modules')) return;
      const info = statSync(path);
      if (info.isDirectory()) {
        for (const n of readdirSync(path)) scan(join(path, n));
        return;
      }
      if (readFileSync(path, 'utf8').includes(host)) offenders.push(relative(ROOT, path));
    };
    roots.forEach(scan);
    expect(offenders).toEqual([]);
  });
});
