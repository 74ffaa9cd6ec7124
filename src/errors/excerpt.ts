/**
 * How runplan quotes text that comes from an application (a version file, a
 * package.json field, a Gemfile line, a configuration value) in its errors and
 * warnings: bounded, so that a hostile 50 MB file gives a one-line message, and
 * with control characters escaped, so that terminal escape sequences, NUL bytes
 * and direction overrides reach the terminal as visible text.
 */

/** Characters of app content a message quotes at most. */
export const EXCERPT_MAX_CHARS = 120;

// C0 and C1 controls, DEL, and the Unicode format characters that reorder or hide text.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Whether `text` holds a character escapeControls would escape: a line break, a control, an invisible or reordering character. */
export function hasUnsafeCharacters(text: string): boolean {
  UNSAFE.lastIndex = 0;
  const found = UNSAFE.test(text);
  UNSAFE.lastIndex = 0;
  return found;
}

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** `text` with every control or invisible character written as an escape (`\n`, `\u001b`). */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, (c) => SHORT[c] ?? `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

/** The first `max` characters of `text` (not splitting a surrogate pair), and how many were left out. */
function cut(text: string, max: number): { head: string; omitted: number } {
  if (text.length <= max) return { head: text, omitted: 0 };
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { head: text.slice(0, end), omitted: text.length - end };
}

/**
 * `text` as a double-quoted string for a message, the way JSON.stringify writes
 * it (so short plain values read the same), cut after `max` characters:
 * `"abc…" (and 4999880 more characters)`.
 */
export function quoteExcerpt(text: string, max = EXCERPT_MAX_CHARS): string {
  const { head, omitted } = cut(text, max);
  const quoted = `"${escapeControls(head.replace(/[\\"]/g, '\\$&'))}${omitted > 0 ? '…' : ''}"`;
  return omitted > 0 ? `${quoted} (and ${omitted} more characters)` : quoted;
}

/** `text` unquoted, escaped and cut after `max` characters with "…", for a line shown under a message. */
export function lineExcerpt(text: string, max = EXCERPT_MAX_CHARS): string {
  const { head, omitted } = cut(text, max);
  return `${escapeControls(head)}${omitted > 0 ? '…' : ''}`;
}

/**
 * A JSON value read from an application file, for a message: strings quoted as
 * by quoteExcerpt, numbers, booleans and null as written, arrays and objects by
 * their kind only (they may be large or nested thousands of levels deep).
 */
export function quoteJsonValue(value: unknown): string {
  if (typeof value === 'string') return quoteExcerpt(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return String(typeof value);
}

/**
 * `NAME='value'`: a variable assignment a fix tells the user to make, quoted for
 * a POSIX shell (`--env NAME='…'`), so that a `$PORT` in it reaches the
 * application instead of being expanded by the user's shell. The value comes
 * from the application's files: bounded and escaped as lineExcerpt does.
 */
export function assignmentExcerpt(name: string, value: string, max = EXCERPT_MAX_CHARS): string {
  const shown = lineExcerpt(value, max);
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(shown) ? `${name}=${shown}` : `${name}='${shown.replace(/'/g, `'\\''`)}'`;
}
