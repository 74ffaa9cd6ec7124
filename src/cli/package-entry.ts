import { quoteExcerpt } from '../errors/excerpt.js';

/**
 * The module a package directory names as its entry, as `import` of the package
 * by name would load it: its `exports` for "." under the conditions of an ES
 * module import, else its `main`. Pure: the caller reads package.json.
 *
 * Node.js offers no public way to resolve a package that is not installed under
 * a name (a directory given as `--buildpack ./dir`), and require.resolve would
 * pick the `require` condition, which an ES-module-only package does not have.
 */

/** The conditions Node.js matches for `import` (node-addons aside: a buildpack entry is JavaScript). */
const IMPORT_CONDITIONS = new Set(['import', 'node', 'default']);

export type PackageEntry =
  /** A path relative to the package directory ("./index.mjs"). */
  | { readonly kind: 'exports'; readonly target: string }
  /** No `exports`: Node's rules for `main` (extensions, index.js) apply, relative to the directory. */
  | { readonly kind: 'main'; readonly main: string }
  /** `exports` names no "." entry an import can load, or names one outside the package. */
  | { readonly kind: 'invalid'; readonly why: string };

export function packageEntry(manifest: unknown): PackageEntry {
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) return { kind: 'invalid', why: 'its package.json is not a JSON object' };
  const { exports, main } = manifest as { exports?: unknown; main?: unknown };
  if (exports === undefined) return { kind: 'main', main: typeof main === 'string' && main !== '' ? main : 'index.js' };
  const target = conditionalTarget(rootExport(exports));
  if (target === undefined) return { kind: 'invalid', why: 'its package.json "exports" has no "." entry for import (conditions import, node or default)' };
  // Node's own rule: a target is "./…" inside the package, with no ".." or "node_modules" segment.
  if (!target.startsWith('./') || target.split(/[\\/]/).some((s) => s === '..' || s === 'node_modules')) {
    return { kind: 'invalid', why: `its package.json "exports" names ${quoteExcerpt(target)}, which is not a "./" path inside the package` };
  }
  return { kind: 'exports', target };
}

/** The "." entry: `exports` itself, unless it maps subpaths ("." and "./x" keys). */
function rootExport(exports: unknown): unknown {
  if (typeof exports !== 'object' || exports === null || Array.isArray(exports)) return exports;
  const keys = Object.keys(exports);
  return keys.some((k) => k.startsWith('.')) ? (exports as Record<string, unknown>)['.'] : exports;
}

/** Node's order: the first key (in the object's order) that is an active condition and resolves; the first array item that resolves. */
function conditionalTarget(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = conditionalTarget(item);
      if (target !== undefined) return target;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [condition, nested] of Object.entries(value)) {
    if (!IMPORT_CONDITIONS.has(condition)) continue;
    const target = conditionalTarget(nested);
    if (target !== undefined) return target;
  }
  return undefined;
}
