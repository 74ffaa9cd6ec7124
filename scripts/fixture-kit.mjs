// What the tests (test/helpers/fixtures.ts) and `npm run fixture` share about a
// fixture application: its expect.json (with variants), the `{{placeholders}}` it
// uses, and the temporary copy that is deployed (shared files added, templates
// and preparation commands filled with this machine's versions, those commands run).
// Plain JavaScript so that the by-hand runner needs no build step.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** Every fixture under fixtures/<type>/<case>/ with an expect.json; each variant is a fixture of its own ("<case>/<variant>"). */
export function listFixtures(type) {
  const out = [];
  for (const t of readdirSync(FIXTURES_ROOT, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()) {
    // fixtures/host/ holds runplan-host's fixtures, checked through its edge by host/test, not by runplan's fixture runner.
    if (type === undefined ? t === 'host' : t !== type) continue;
    for (const name of readdirSync(join(FIXTURES_ROOT, t)).sort()) {
      const dir = join(FIXTURES_ROOT, t, name);
      if (!existsSync(join(dir, 'expect.json'))) continue;
      const { variants, ...expectation } = JSON.parse(readFileSync(join(dir, 'expect.json'), 'utf8'));
      if (!variants) out.push({ type: t, name, dir, expect: expectation });
      for (const { name: variant, ...v } of variants ?? []) {
        const merge = (key) => ({ ...expectation[key], ...v[key] });
        out.push({ type: t, name: `${name}/${variant}`, dir, expect: { ...expectation, ...v, env: merge('env'), addons: merge('addons'), hostEnv: merge('hostEnv') } });
      }
    }
  }
  return out;
}

const PLACEHOLDER = /\{\{([A-Za-z_][\w-]*)(?::([^{}]*))?\}\}/g;

/** The `{{name}}` and `{{name:argument}}` placeholders a value uses, as written. */
export function placeholdersIn(value) {
  return [...JSON.stringify(value).matchAll(PLACEHOLDER)].map((m) => m[0]);
}

/**
 * Replaces every `{{name}}` / `{{name:argument}}` in the strings of `value` with
 * `resolve(name, argument)`; a placeholder nobody resolves is a mistake in the fixture.
 */
export function fillPlaceholders(value, resolve) {
  const fill = (v) => {
    if (typeof v === 'string') {
      return v.replace(PLACEHOLDER, (whole, name, argument) => {
        const filled = resolve(name, argument);
        if (filled === undefined) throw new Error(`fixture uses ${whole}, which the test does not provide`);
        return filled;
      });
    }
    if (Array.isArray(v)) return v.map(fill);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };
  return fill(value);
}

const read = new Map();
const once = (name, compute) => (read.has(name) ? read.get(name) : read.set(name, compute()).get(name));

/**
 * Versions this machine's packages provide, read when first asked (Debian's
 * security updates move them: a fixture never writes them down).
 * - RUBY_VERSION "3.1.7", RUBY_SERIES "3.1", RUBY_MAJOR "3": what `ruby` reports.
 * - DEBIAN_BUNDLER "2.3.15": the bundler of Debian's ruby-bundler package. Since
 *   ruby3.1 3.1.7 ships bundler 2.3.27 as a default gem, plain `bundle` is that
 *   one, and it takes Debian-packaged gems that have no gem directory (racc,
 *   sprockets, tilt…) for deleted; Debian's own bundler installs them. A lock file
 *   made with it says so in BUNDLED WITH, and RubyGems then runs that bundler.
 */
export function machinePlaceholder(name) {
  if (name.startsWith('RUBY_')) {
    const ruby = once('ruby', () => execFileSync('ruby', ['-e', 'print RUBY_VERSION'], { encoding: 'utf8' }).trim());
    const [major, minor] = ruby.split('.');
    return { RUBY_VERSION: ruby, RUBY_SERIES: `${major}.${minor}`, RUBY_MAJOR: major }[name];
  }
  if (name === 'DEBIAN_BUNDLER') {
    // "2.3.15-2+deb12u1": the upstream version is what comes before Debian's revision.
    return once(name, () => execFileSync('dpkg-query', ['-W', '-f', '${Version}', 'ruby-bundler'], { encoding: 'utf8' }).replace(/-[^-]*$/, ''));
  }
  return undefined;
}

/**
 * The application as it is deployed. A fixture that uses shared files, templates
 * or preparation commands (or any fixture, with `copy: true`) is copied into a
 * new temporary directory first (the caller removes `cleanup` when done);
 * otherwise the fixture's own directory. `resolve` fills the placeholders of the
 * templates and commands.
 */
export function prepareCopy(fixture, resolve = machinePlaceholder, { copy = false } = {}) {
  const { shared = [], templates = [], prepare = [] } = fixture.expect;
  if (!copy && shared.length + templates.length + prepare.length === 0) return { dir: fixture.dir, cleanup: undefined };
  const base = fixture.name.split('/')[0];
  const cleanup = mkdtempSync(join(tmpdir(), `runplan-fixture-${fixture.name.replace(/\//g, '-')}-`));
  try {
    const dir = join(cleanup, base);
    cpSync(fixture.dir, dir, { recursive: true });
    for (const file of shared) cpSync(join(fixture.dir, '..', '_shared', file), join(dir, file));
    for (const file of templates) writeFileSync(join(dir, file), fillPlaceholders(readFileSync(join(dir, file), 'utf8'), resolve));
    for (const [command, ...args] of fillPlaceholders(prepare, resolve)) {
      try {
        execFileSync(command, args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (error) {
        throw new Error(`preparing ${fixture.type}/${fixture.name}: ${[command, ...args].join(' ')} failed:\n${error.stderr || error.message}`);
      }
    }
    return { dir, cleanup };
  } catch (error) {
    rmSync(cleanup, { recursive: true, force: true });
    throw error;
  }
}
