/**
 * One error type for everything runplan refuses to do. Each error has a stable
 * code (`RUNPLAN_E_<AREA>_<WHAT>`), a message saying what went wrong, the file
 * or variable at fault when there is one, and the fix.
 */

/** How a failure should be reported: a mistake in the user's input, a failed deployment, or a bug. */
export type ErrorKind = 'input' | 'deployment' | 'internal';

/** The documented, stable part of an error: what the code means and how to fix it in general. */
export interface ErrorDefinition {
  readonly code: string;
  readonly title: string;
  readonly kind: ErrorKind;
  readonly fix: string;
}

/** The specific part of one occurrence. */
export interface ErrorOccurrence {
  /** What happened, with the values involved (never a secret). */
  readonly message: string;
  /** Path of the file at fault, relative to the application when possible. */
  readonly file?: string;
  /** Name of the environment variable at fault. */
  readonly variable?: string;
  /** A fix for this occurrence, when more precise than the definition's. */
  readonly fix?: string;
  readonly cause?: unknown;
  /** Machine-readable facts, e.g. `{ step: 'install', exitCode: 1 }`. Never secrets. */
  readonly details?: Readonly<Record<string, unknown>>;
}

const RUNPLAN_ERROR_BRAND = Symbol.for('runplan.error');

/** An error with a stable code (RUNPLAN_E_… or a buildpack's prefix): the cause, how to fix it, and the file or variable at fault. Created from a definition (defineErrors), never directly. */
export class RunplanError extends Error {
  /** The same in every copy of runplan loaded in a process (isRunplanError). */
  readonly [RUNPLAN_ERROR_BRAND] = true;
  readonly code: string;
  readonly kind: ErrorKind;
  readonly title: string;
  readonly file: string | undefined;
  readonly variable: string | undefined;
  readonly fix: string;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(definition: ErrorDefinition, occurrence: ErrorOccurrence) {
    super(`${definition.code}: ${occurrence.message}`, occurrence.cause === undefined ? undefined : { cause: occurrence.cause });
    this.name = 'RunplanError';
    this.code = definition.code;
    this.kind = definition.kind;
    this.title = definition.title;
    this.file = occurrence.file;
    this.variable = occurrence.variable;
    this.fix = occurrence.fix ?? definition.fix;
    this.details = occurrence.details ?? {};
  }

  /** The message without the code prefix. */
  get reason(): string {
    return this.message.slice(this.code.length + 2);
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      kind: this.kind,
      message: this.reason,
      ...(this.file === undefined ? {} : { file: this.file }),
      ...(this.variable === undefined ? {} : { variable: this.variable }),
      fix: this.fix,
      ...(Object.keys(this.details).length === 0 ? {} : { details: this.details }),
    };
  }
}

/** A code together with a way to raise it. */
export interface ErrorType extends ErrorDefinition {
  create(occurrence: ErrorOccurrence): RunplanError;
  /** True when `error` is a RunplanError with this code. */
  is(error: unknown): error is RunplanError;
}

/** How codes begin: `RUNPLAN` for runplan and its buildpacks; a host's buildpack chooses its own. */
export interface CodeOptions {
  /**
   * Upper-case letters and digits, e.g. "ACME" for codes `ACME_E_<AREA>_<WHAT>` and
   * `ACME_W_<AREA>_<WHAT>`; words may be joined by "_" ("RUNPLAN_HOST": a host on runplan).
   */
  readonly prefix?: string;
}

// Never ending in _E or _W, which would make a code read as another prefix's.
const PREFIX_PATTERN = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]{2,})*$/;

/** The full code of `key`, or a thrown Error (a programming mistake of the buildpack's author, caught by its first test). */
export function codeOf(key: string, kind: 'E' | 'W', options: CodeOptions = {}): string {
  const prefix = options.prefix ?? 'RUNPLAN';
  if (!PREFIX_PATTERN.test(prefix)) throw new Error(`invalid code prefix ${JSON.stringify(prefix)}: expected upper-case letters and digits (words joined by "_"), e.g. ACME`);
  const code = `${prefix}_${kind}_${key}`;
  const what = kind === 'E' ? 'error' : 'warning';
  if (!/^[A-Z0-9]+_[A-Z0-9_]+$/.test(key) || key.endsWith('_')) throw new Error(`invalid ${what} code ${code}: expected ${prefix}_${kind}_<AREA>_<WHAT>`);
  return code;
}

/**
 * Declares a group of error codes. Keys become codes with the `RUNPLAN_E_` prefix
 * (or the host's own, `options.prefix`), so `{ NODE_NO_START: … }` defines
 * `RUNPLAN_E_NODE_NO_START`.
 */
export function defineErrors<K extends string>(definitions: Record<K, Omit<ErrorDefinition, 'code'>>, options: CodeOptions = {}): Record<K, ErrorType> {
  const out = {} as Record<K, ErrorType>;
  for (const key of Object.keys(definitions) as K[]) {
    const code = codeOf(key, 'E', options);
    const definition: ErrorDefinition = { code, ...definitions[key] };
    out[key] = {
      ...definition,
      create: (occurrence) => new RunplanError(definition, occurrence),
      is: (error): error is RunplanError => isRunplanError(error) && error.code === code,
    };
  }
  return out;
}

/** Whether a value is a RunplanError, also one from another copy of runplan loaded in the process (it is told by a brand, not by class). */
export function isRunplanError(error: unknown): error is RunplanError {
  // By brand, not by class: a host's buildpack may load runplan's ES module build while the CLI runs its
  // own bundle (or the CommonJS build), each with a RunplanError class of its own.
  return error instanceof RunplanError || (typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[RUNPLAN_ERROR_BRAND] === true);
}

/** Lists the definitions of one or more groups, for documentation and catalogues. */
export function listDefinitions(...groups: Array<Record<string, ErrorType>>): ErrorDefinition[] {
  return groups.flatMap((group) => Object.values(group).map(({ code, title, kind, fix }) => ({ code, title, kind, fix })));
}
