import { quoteExcerpt } from '../../src/kit/index.js';

/**
 * Where a JSON text goes wrong, for messages: V8's JSON.parse gives no position
 * for "Unexpected token" and reports an unterminated string at the end of the
 * file. This scanner reads the text once, without recursion (a hostile file may
 * nest 100,000 brackets), and returns the offset of the first fault with a
 * short reason.
 */

export interface JsonFault {
  readonly offset: number;
  readonly reason: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

export function findJsonFault(text: string): JsonFault | undefined {
  const stack: Array<{ kind: '{' | '['; offset: number }> = [];
  let i = 0;
  const n = text.length;
  const skipSpace = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const unexpected = (what: string): JsonFault => {
    if (i >= n) {
      const open = stack[stack.length - 1];
      if (!open) return { offset: i, reason: `the file ends where ${what} is expected` };
      const before = text.slice(0, open.offset);
      const line = before.split('\n').length;
      const column = open.offset - before.lastIndexOf('\n');
      return { offset: i, reason: `the file ends where ${what} is expected, before the "${open.kind}" opened at line ${line}, column ${column} is closed` };
    }
    return { offset: i, reason: `unexpected ${describeChar(text, i)} where ${what} is expected` };
  };
  /** Scans a string starting at text[i] === '"'; leaves i after its closing quote. */
  const scanString = (): JsonFault | undefined => {
    const start = i;
    i++;
    for (;;) {
      if (i >= n) return { offset: start, reason: 'the string starting here is never closed' };
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c < 0x20) return { offset: i, reason: `a control character (U+${text.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}) inside a string must be escaped` };
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return { offset: i, reason: 'a \\u escape needs four hexadecimal digits' };
          i += 6;
        } else if (e !== undefined && ESCAPES.has(e)) {
          i += 2;
        } else {
          return { offset: i, reason: 'an unknown escape sequence' };
        }
        continue;
      }
      i++;
    }
  };
  /** Scans one value, or opens a container; returns true when a container was opened. */
  const scanValue = (): JsonFault | 'opened' | undefined => {
    skipSpace();
    const c = text[i];
    if (c === '{' || c === '[') {
      stack.push({ kind: c, offset: i });
      i++;
      return 'opened';
    }
    if (c === '"') return scanString();
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return undefined;
      }
    }
    NUMBER.lastIndex = i;
    if (c !== undefined && NUMBER.test(text)) {
      i = NUMBER.lastIndex;
      return undefined;
    }
    return unexpected('a value');
  };

  // After a value: close containers, or go on to the next member.
  let state: 'value' | 'after' | 'first-member' | 'key' = 'value';
  for (;;) {
    if (state === 'value') {
      const result = scanValue();
      if (result === 'opened') {
        state = 'first-member';
        continue;
      }
      if (result) return result;
      state = 'after';
      continue;
    }
    if (state === 'first-member') {
      skipSpace();
      const top = stack[stack.length - 1] as { kind: '{' | '[' };
      const close = top.kind === '{' ? '}' : ']';
      if (text[i] === close) {
        i++;
        stack.pop();
        state = 'after';
        continue;
      }
      state = top.kind === '{' ? 'key' : 'value';
      continue;
    }
    if (state === 'key') {
      skipSpace();
      if (text[i] !== '"') return unexpected('a property name in double quotes');
      const fault = scanString();
      if (fault) return fault;
      skipSpace();
      if (text[i] !== ':') return unexpected('":"');
      i++;
      state = 'value';
      continue;
    }
    // state === 'after'
    skipSpace();
    const top = stack[stack.length - 1];
    if (!top) {
      if (i < n) return { offset: i, reason: `unexpected ${describeChar(text, i)} after the end of the JSON value` };
      return undefined;
    }
    const close = top.kind === '{' ? '}' : ']';
    if (text[i] === close) {
      i++;
      stack.pop();
      continue;
    }
    if (text[i] === ',') {
      i++;
      skipSpace();
      if (text[i] === close) return { offset: i, reason: `a trailing comma before "${close}"` };
      state = top.kind === '{' ? 'key' : 'value';
      continue;
    }
    return unexpected(`"," or "${close}"`);
  }
}

function describeChar(text: string, i: number): string {
  const c = text.codePointAt(i) ?? 0;
  if (c < 0x20 || c === 0x7f) return `control character U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  return quoteExcerpt(String.fromCodePoint(c));
}

/** How deeply `value` nests arrays and objects, counted without recursion and stopping once past `limit`. */
export function nestingDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop() as { value: unknown; depth: number };
    if (v === null || typeof v !== 'object') continue;
    const d = depth + 1;
    if (d > max) max = d;
    if (max > limit) return max;
    for (const child of Object.values(v)) stack.push({ value: child, depth: d });
  }
  return max;
}
