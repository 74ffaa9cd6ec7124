import type { FileChunk } from './schema.js';

type Escape = NonNullable<Extract<FileChunk, { env: string }>['escape']>;

/**
 * A variable's value as written into a generated file, escaped so that the tool
 * reading the file reads the value back unchanged (a token holding `#` or `;` was
 * cut at it in .npmrc). Pure: the executor writing the file applies it.
 */
export function escapeFileValue(value: string, how: Escape | undefined): string {
  switch (how) {
    case undefined:
      return value;
    case 'npmrc-value':
      return npmrcValue(value);
    case 'yaml-double-quoted':
      return yamlDoubleQuoted(value);
  }
}

// @npmcli/config's env-replace: `${NAME}` / `${NAME?}`, after an even number of backslashes.
const NPM_REFERENCE = /(?<!\\)(\\*)\$\{([^${}?]+)(\?)?\}/g;

/**
 * An .npmrc value as npm reads it: `ini` ends an unquoted value at `;` or `#` and
 * trims it, and takes a value between double quotes as a JSON string; npm then
 * replaces `${NAME}`, unless an odd number of backslashes precedes it. A value of
 * the characters tokens are made of (base64, JWT, hex, `npm_…`) is written as is,
 * as npm's own `npm config set` writes it; any other goes as a JSON string with
 * its `${…}` escaped. npm still trims the value, and reads `true`, `false`, `null`
 * as such: no quoting changes that.
 */
function npmrcValue(value: string): string {
  if (/^[A-Za-z0-9._~+/=:@%-]*$/.test(value)) return value;
  const literal = value.replace(NPM_REFERENCE, (match, slashes: string) => `${'\\'.repeat(slashes.length * 2 + 1)}${match.slice(slashes.length)}`);
  // ini matches a line with `.`, which stops at U+2028 and U+2029 (the line would be dropped): escaped too.
  return JSON.stringify(literal).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/**
 * The inside of a YAML double-quoted scalar: `\` and `"` escaped, and every
 * character YAML does not take as written (C0 and C1 controls, DEL, YAML 1.1's
 * line and paragraph separators, U+FEFF, U+FFFE, U+FFFF) as `\xNN` / `\uNNNN`.
 */
function yamlDoubleQuoted(value: string): string {
  return value.replace(/[\\"\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/g, (c) => {
    if (c === '\\' || c === '"') return `\\${c}`;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
