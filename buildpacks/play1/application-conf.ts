import { parseProperties, type PropertyEntry } from './properties.js';

export const APPLICATION_CONF = 'conf/application.conf';

/** The framework id the service runs applications with (specification, "Play 1.x files"). */
export const FRAMEWORK_ID = 'platform';

/** The `%<id>.` prefix as Play 1.x recognises it. */
const ID_KEY = /^%([a-zA-Z0-9_-]+)\.(.*)$/s;

/** A `${…}` reference as Play 1.x resolves it. */
const REFERENCE = /\$\{([^}]+)\}/g;

export interface AppliedEntry {
  /** The key the application reads, without any `%id.` prefix. */
  readonly key: string;
  readonly value: string;
  readonly line: number;
  /** The key as written, e.g. "%platform.db.url". */
  readonly writtenAs: string;
  /** The plain entry a `%id.` entry replaced. */
  readonly replaces?: PropertyEntry;
}

export interface FrameworkIdView {
  readonly id: string;
  /** The configuration the application sees, by key. */
  readonly applied: ReadonlyMap<string, AppliedEntry>;
  /** Entries for other framework ids, which do not apply. */
  readonly otherIds: readonly PropertyEntry[];
}

/**
 * The configuration Play 1.x builds for framework id `id`: plain keys, then every
 * `%id.key` replacing `key` whatever the order in the file (its value trimmed, as
 * Play does); `%other.key` entries are dropped.
 */
export function applyFrameworkId(entries: readonly PropertyEntry[], id: string): FrameworkIdView {
  const plain = new Map<string, PropertyEntry>();
  const forId = new Map<string, PropertyEntry & { bare: string }>();
  const otherIds: PropertyEntry[] = [];
  for (const entry of entries) {
    const m = ID_KEY.exec(entry.key);
    if (!m) plain.set(entry.key, entry);
    else if (m[1] === id) forId.set(m[2] as string, { ...entry, bare: m[2] as string });
    else otherIds.push(entry);
  }
  const applied = new Map<string, AppliedEntry>();
  for (const [key, e] of plain) applied.set(key, { key, value: e.value, line: e.line, writtenAs: e.key });
  for (const [key, e] of forId) {
    const replaced = plain.get(key);
    applied.set(key, { key, value: e.value.trim(), line: e.line, writtenAs: e.key, ...(replaced ? { replaces: replaced } : {}) });
  }
  return { id, applied, otherIds };
}

/** The names a value refers to with `${NAME}`, in order. */
export function references(value: string): string[] {
  return [...value.matchAll(REFERENCE)].map((m) => m[1] as string);
}

type ReferenceStatus =
  /** Play substitutes it itself (`application.path`, `play.path`). */
  | { readonly kind: 'framework' }
  /** A variable of the run environment (or of the host machine). */
  | { readonly kind: 'variable'; readonly origin: string }
  /** A dotted name: a JVM system property, only known when the JVM runs. */
  | { readonly kind: 'system-property' }
  | { readonly kind: 'undefined' };

export interface Reference {
  readonly key: string;
  readonly writtenAs: string;
  readonly line: number;
  readonly name: string;
  readonly status: ReferenceStatus;
}

const FRAMEWORK_PATHS = new Set(['application.path', 'play.path']);
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Classifies every `${NAME}` of the applied configuration the way Play 1.x will
 * resolve it at run time: its own paths, then JVM system properties, then the
 * process environment. `lookup` says where a variable is defined, if anywhere.
 */
export function classifyReferences(view: FrameworkIdView, lookup: (name: string) => string | undefined): Reference[] {
  const out: Reference[] = [];
  for (const entry of view.applied.values()) {
    for (const name of references(entry.value)) {
      let status: ReferenceStatus;
      if (FRAMEWORK_PATHS.has(name)) status = { kind: 'framework' };
      else if (!VARIABLE_NAME.test(name)) status = { kind: 'system-property' };
      else {
        const origin = lookup(name);
        status = origin === undefined ? { kind: 'undefined' } : { kind: 'variable', origin };
      }
      out.push({ key: entry.key, writtenAs: entry.writtenAs, line: entry.line, name, status });
    }
  }
  return out.sort((a, b) => a.line - b.line);
}

export interface ApplicationConf {
  readonly entries: readonly PropertyEntry[];
  readonly problems: ReturnType<typeof parseProperties>['problems'];
  readonly view: FrameworkIdView;
}

/** Reads conf/application.conf: its entries, what could not be read, and the view of the framework id's values. */
export function readApplicationConf(text: string, id: string = FRAMEWORK_ID): ApplicationConf {
  const { entries, problems } = parseProperties(text);
  return { entries, problems, view: applyFrameworkId(entries, id) };
}
