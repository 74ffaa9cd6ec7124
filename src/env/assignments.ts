import { CoreErrors } from '../errors/core-errors.js';
import { assertValidVariableName } from './names.js';

export interface Assignment {
  readonly name: string;
  readonly value: string;
  /** Where it was read, e.g. "--env" or "app.env:3". */
  readonly origin: string;
}

/** Parses one `NAME=VALUE` (the value may contain "=" and may be empty). */
export function parseAssignment(text: string, origin: string): Assignment {
  const eq = text.indexOf('=');
  if (eq <= 0) {
    throw CoreErrors.ENV_MALFORMED_ASSIGNMENT.create({
      // Without "=" nothing tells the name from a value (a secret pasted alone): none of it is shown.
      message: `${origin}: expected NAME=VALUE, got ${eq === 0 ? 'an empty name' : `${text.length} character(s) with no "=" (not shown: they may hold a secret)`}.`,
    });
  }
  const name = text.slice(0, eq);
  assertValidVariableName(name, origin);
  return { name, value: text.slice(eq + 1), origin };
}

/**
 * Parses an env file: `NAME=VALUE` lines, optional `export ` prefix, `#` comments,
 * blank lines, and values in single quotes (literal) or double quotes (with \n, \t,
 * \" and \\ escapes; may span lines).
 */
export function parseEnvFile(text: string, fileLabel: string): Assignment[] {
  const out: Assignment[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  // The file is at fault, not the application: name it and the line, not the (maybe secret) value.
  const nulLine = lines.findIndex((l) => l.includes('\0'));
  if (nulLine >= 0) {
    throw CoreErrors.ENV_VALUE_INVALID.create({
      message: `${fileLabel}:${nulLine + 1} contains a NUL byte; an env file is text, and no process environment can hold one.`,
      file: fileLabel,
    });
  }
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const trimmed = (lines[i] ?? '').trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const body = trimmed.startsWith('export ') ? trimmed.slice(7).trimStart() : trimmed;
    const origin = `${fileLabel}:${lineNo}`;
    const eq = body.indexOf('=');
    if (eq <= 0) {
      throw CoreErrors.ENV_MALFORMED_ASSIGNMENT.create({
        message: `${origin}: expected NAME=VALUE.`,
        file: fileLabel,
      });
    }
    const name = body.slice(0, eq).trim();
    assertValidVariableName(name, origin);
    const rest = body.slice(eq + 1).trimStart();
    let value: string;
    const quote = rest[0];
    if (quote === '"' || quote === "'") {
      // A quoted value may continue on the following lines until its closing quote.
      let raw = rest.slice(1);
      let close = findClosingQuote(raw, quote);
      while (close < 0 && i + 1 < lines.length) {
        i++;
        raw += `\n${lines[i] ?? ''}`;
        close = findClosingQuote(raw, quote);
      }
      if (close < 0) {
        throw CoreErrors.ENV_MALFORMED_ASSIGNMENT.create({
          message: `${origin}: the value of ${name} opens a ${quote} quote that is never closed.`,
          file: fileLabel,
          variable: name,
        });
      }
      const inner = raw.slice(0, close);
      value = quote === "'" ? inner : unescapeDoubleQuoted(inner);
    } else {
      const hash = rest.search(/\s#/);
      value = (hash >= 0 ? rest.slice(0, hash) : rest).trimEnd();
    }
    out.push({ name, value, origin });
  }
  return out;
}

function findClosingQuote(s: string, quote: string): number {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && quote === '"') {
      i++;
      continue;
    }
    if (s[i] === quote) return i;
  }
  return -1;
}

function unescapeDoubleQuoted(s: string): string {
  return s.replace(/\\([\\"nrt$])/g, (_, c: string) => ({ n: '\n', r: '\r', t: '\t' })[c] ?? c);
}
