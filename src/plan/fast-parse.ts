import type { z } from 'zod';

/**
 * A validator derived from a Zod schema, for values that are valid: Zod's
 * interpreted parse walks a plan through a payload, an issue list and a result
 * per field, which made the whole-plan check the largest share of planning a
 * new application (docs/perf.md). This one builds the same output (a copy in
 * the schema's key order, unknown keys left out) and gives up, returning
 * undefined, at the first doubt: a value Zod might refuse, or a schema kind it
 * does not know. Zod then parses the value as before, reports its issues and
 * stays the only judge of a refusal; test/unit/fast-parse.test.ts holds both to
 * the same answers on plans and on mutations of them.
 *
 * It reads Zod's internal definitions (`_zod.def`), which is why anything it
 * does not recognise is left to Zod rather than guessed at.
 */
export function fastParse<T extends z.ZodType>(schema: T, value: unknown): { data: z.output<T> } | undefined {
  let parse = compiled.get(schema);
  if (parse === undefined) {
    parse = compile(schema as unknown as Node) ?? null;
    compiled.set(schema, parse);
  }
  if (parse === null) return undefined;
  const data = parse(value);
  return data === FAIL ? undefined : { data: data as z.output<T> };
}

const FAIL: unique symbol = Symbol('fail');
type Parse = (value: unknown) => unknown;

/** Each schema's validator, or null for a schema left to Zod. */
const compiled = new WeakMap<object, Parse | null>();

/** The parts of Zod 4's internals read here. */
interface Node {
  readonly _zod: {
    readonly def: Def;
    readonly traits: ReadonlySet<string>;
    readonly optin?: string;
    readonly optout?: string;
    readonly values?: ReadonlySet<unknown>;
    readonly check?: (payload: { value: unknown; issues: unknown[] }) => unknown;
  };
}
interface Def {
  readonly type: string;
  readonly checks?: readonly Node[];
  readonly coerce?: boolean;
  readonly shape?: Readonly<Record<string, Node>>;
  readonly catchall?: Node;
  readonly element?: Node;
  readonly innerType?: Node;
  readonly options?: readonly Node[];
  readonly keyType?: Node;
  readonly valueType?: Node;
  readonly mode?: string;
}

function compile(node: Node): Parse | undefined {
  const base = compileType(node);
  const checks = node._zod.def.checks ?? [];
  if (base === undefined || checks.some((c) => typeof c._zod.check !== 'function')) return undefined;
  if (checks.length === 0) return base;
  // Zod runs a schema's checks (refinements, lengths, formats) on the value its type made; so does this.
  return (value) => {
    const made = base(value);
    if (made === FAIL) return FAIL;
    const payload = { value: made, issues: [] as unknown[] };
    for (const c of checks) {
      // An asynchronous refinement is Zod's to wait for.
      if (c._zod.check?.(payload) instanceof Promise || payload.issues.length > 0) return FAIL;
    }
    return payload.value;
  };
}

function compileType(node: Node): Parse | undefined {
  const def = node._zod.def;
  switch (def.type) {
    case 'string':
      return def.coerce ? undefined : (v) => (typeof v === 'string' ? v : FAIL);
    case 'number':
      return def.coerce ? undefined : (v) => (typeof v === 'number' && Number.isFinite(v) ? v : FAIL);
    case 'boolean':
      return def.coerce ? undefined : (v) => (typeof v === 'boolean' ? v : FAIL);
    case 'literal':
    case 'enum': {
      const values = node._zod.values;
      return values === undefined ? undefined : (v) => (values.has(v) ? v : FAIL);
    }
    case 'optional': {
      // An exact optional refuses an explicit undefined; a defaulted inner schema substitutes a value.
      if (node._zod.traits.has('$ZodExactOptional') || def.innerType === undefined || def.innerType._zod.optin !== undefined) return undefined;
      const inner = compile(def.innerType);
      return inner && ((v) => (v === undefined ? undefined : inner(v)));
    }
    case 'nullable': {
      const inner = def.innerType && compile(def.innerType);
      return inner && ((v) => (v === null ? null : inner(v)));
    }
    case 'array': {
      const element = def.element && compile(def.element);
      return element && ((v) => parseArray(v, element));
    }
    case 'object':
      return compileObject(def);
    case 'record': {
      const key = def.keyType?._zod;
      // Only records keyed by any string: other key schemas convert or enumerate keys.
      if (key === undefined || key.def.type !== 'string' || key.def.coerce || (key.def.checks?.length ?? 0) > 0 || key.values !== undefined || def.mode !== undefined) return undefined;
      const value = def.valueType && compile(def.valueType);
      return value && ((v) => parseRecord(v, value));
    }
    case 'union': {
      // Zod's union gives the first option that accepts the value (a discriminated one, the option its
      // discriminator names, which is then the only one that can accept it); an exclusive one (xor) is left to Zod.
      if (node._zod.traits.has('$ZodXor') || def.options === undefined) return undefined;
      const options = def.options.map(compile);
      if (options.some((o) => o === undefined)) return undefined;
      return (v) => {
        for (const option of options as Parse[]) {
          const made = option(v);
          if (made !== FAIL) return made;
        }
        return FAIL;
      };
    }
    default:
      return undefined;
  }
}

function compileObject(def: Def): Parse | undefined {
  // A catchall (strict, passthrough) treats unknown keys otherwise than leaving them out.
  if (def.catchall !== undefined || def.shape === undefined) return undefined;
  const fields: { key: string; parse: Parse; optional: boolean }[] = [];
  for (const [key, schema] of Object.entries(def.shape)) {
    const { optin, optout } = schema._zod;
    const optional = optin === 'optional' && optout === 'optional';
    if (key === '__proto__' || (!optional && (optin !== undefined || optout !== undefined))) return undefined;
    const parse = compile(schema);
    if (parse === undefined) return undefined;
    fields.push({ key, parse, optional });
  }
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return FAIL;
    const input = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const { key, parse, optional } of fields) {
      // As Zod: an absent optional key stays absent, one present with undefined stays present.
      if (!(key in input)) {
        if (optional) continue;
        return FAIL;
      }
      const made = parse(input[key]);
      if (made === FAIL) return FAIL;
      out[key] = made;
    }
    return out;
  };
}

function parseArray(v: unknown, element: Parse): unknown {
  if (!Array.isArray(v)) return FAIL;
  const out = new Array<unknown>(v.length);
  for (let i = 0; i < v.length; i++) {
    const made = element(v[i]);
    if (made === FAIL) return FAIL;
    out[i] = made;
  }
  return out;
}

function parseRecord(v: unknown, value: Parse): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return FAIL;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return FAIL;
  const input = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Reflect.ownKeys(input)) {
    // Symbols, hidden keys and __proto__ are Zod's to judge.
    if (typeof key !== 'string' || key === '__proto__' || !Object.prototype.propertyIsEnumerable.call(input, key)) return FAIL;
    const made = value(input[key]);
    if (made === FAIL) return FAIL;
    out[key] = made;
  }
  return out;
}
