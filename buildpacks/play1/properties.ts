/**
 * A reader for the Java properties format, as java.util.Properties#load reads it
 * (Play 1.x loads conf/application.conf with it, in UTF-8). Implemented here
 * rather than approximated because the plan's explanation must agree with what
 * the framework will read: continuation lines, `=`/`:`/blank separators,
 * `#`/`!` comments and backslash escapes included. Each entry keeps the line it
 * starts on, for messages.
 */
export interface PropertyEntry {
  readonly key: string;
  readonly value: string;
  /** 1-based line where the entry starts. */
  readonly line: number;
}

interface PropertiesProblem {
  readonly line: number;
  readonly message: string;
}

export interface ParsedProperties {
  /** Every entry in file order; a later duplicate key wins, as in java.util.Properties. */
  readonly entries: readonly PropertyEntry[];
  /** What java.util.Properties would refuse (a malformed \uXXXX escape). */
  readonly problems: readonly PropertiesProblem[];
}

const BLANK = new Set([' ', '\t', '\f']);

/** Parses a Java properties file as java.util.Properties does, with each entry's line, and what could not be read. */
export function parseProperties(text: string): ParsedProperties {
  // A byte-order mark is kept, as java.util.Properties keeps it (it becomes part of the first key).
  const lines = text.split(/\r\n|\r|\n/);
  const entries: PropertyEntry[] = [];
  const problems: PropertiesProblem[] = [];
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let logical = stripLeading(lines[i] ?? '');
    if (logical === '' || logical[0] === '#' || logical[0] === '!') continue;
    // An odd number of trailing backslashes joins the next line, without its leading blanks.
    while (endsWithOddBackslashes(logical) && i + 1 < lines.length) {
      i++;
      logical = logical.slice(0, -1) + stripLeading(lines[i] ?? '');
    }
    if (endsWithOddBackslashes(logical)) logical = logical.slice(0, -1);
    const { key, value } = splitKeyValue(logical);
    try {
      entries.push({ key: unescapeProperty(key), value: unescapeProperty(value), line: start });
    } catch (error) {
      problems.push({ line: start, message: (error as Error).message });
    }
  }
  return { entries, problems };
}

function stripLeading(s: string): string {
  let i = 0;
  while (i < s.length && BLANK.has(s[i] as string)) i++;
  return s.slice(i);
}

function endsWithOddBackslashes(s: string): boolean {
  let n = 0;
  for (let i = s.length - 1; i >= 0 && s[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

/** The key ends at the first unescaped `=`, `:` or blank; one `=` or `:` may follow the blanks after it. */
function splitKeyValue(line: string): { key: string; value: string } {
  let i = 0;
  while (i < line.length) {
    const c = line[i] as string;
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '=' || c === ':' || BLANK.has(c)) break;
    i++;
  }
  const key = line.slice(0, Math.min(i, line.length));
  let j = i;
  while (j < line.length && BLANK.has(line[j] as string)) j++;
  if (j < line.length && (line[j] === '=' || line[j] === ':')) j++;
  while (j < line.length && BLANK.has(line[j] as string)) j++;
  return { key, value: line.slice(j) };
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { t: '\t', n: '\n', r: '\r', f: '\f' };

function unescapeProperty(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = s[++i];
    if (next === undefined) break;
    if (next === 'u') {
      const hex = s.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new Error(`malformed \\uxxxx escape "\\u${hex}"`);
      out += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else {
      out += SIMPLE_ESCAPES[next] ?? next;
    }
  }
  return out;
}
