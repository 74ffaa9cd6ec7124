import dotenv from 'dotenv';
import { CoreErrors } from '../errors/core-errors.js';
import { assertValidVariableName, isValidVariableName } from './names.js';

/** One variable read from a file or an option: its name, value, and where it was read (never printed with the value). */
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

/** How the option that gave `name` is written: `--env NAME`, `--addon-env ADDON:NAME` (origin "--addon-env ADDON"). */
export function optionSpelling(origin: string, name: string): string {
  return origin.startsWith('--addon-env ') ? `--addon-env ${origin.slice('--addon-env '.length)}:${name}` : `${origin} ${name}`;
}

/**
 * `NAME=VALUE`, or a bare `NAME` whose value is taken from `environment` (runplan's
 * own), as `docker run -e NAME` does: the value then is in no process's arguments,
 * which every user of the machine can read in /proc/PID/cmdline. `inArguments`
 * says which form it was.
 */
export function parseOptionAssignment(text: string, origin: string, environment: NodeJS.ProcessEnv): Assignment & { readonly inArguments: boolean } {
  if (text.includes('=') || !isValidVariableName(text)) return { ...parseAssignment(text, origin), inArguments: true };
  const value = environment[text];
  if (value === undefined) {
    // A token pasted alone can look like a name (ghp_…): only a conventional upper-case name is shown.
    const shown = /^[A-Z_][A-Z0-9_]{0,63}$/.test(text);
    throw CoreErrors.ENV_NOT_SET.create({
      message: `${optionSpelling(origin, shown ? text : 'NAME')}${shown ? '' : ` (${text.length} characters, not shown: they may hold a secret)`} takes the value from runplan's own environment, which has no variable ${shown ? 'of that name' : 'so named'}.`,
      ...(shown
        ? { variable: text, fix: `Export ${text} to runplan before starting it (\`export ${text}\` in the script or service unit that runs runplan), or give it in a file with --app-env-file FILE.` }
        : {}),
    });
  }
  return { name: text, value, origin, inArguments: false };
}

/**
 * Parses an env file in dotenv's format, with dotenv's own parser: `NAME=VALUE`
 * lines, an optional `export ` prefix, `#` comments (a whole line, or after a space
 * in an unquoted value), blank lines, and values in single quotes, double quotes
 * (where `\n` and `\r` are line breaks; may span lines) or backquotes.
 *
 * What runplan accepts it reads exactly as `dotenv.parse` does, so a file gives the
 * application the same values here as when the application loads it with dotenv.
 * What dotenv would skip or cut silently is refused instead, naming the file and
 * line but never the value (it may be a secret): a line that is not an assignment,
 * a quote not closed at the end of a line, a "#" against an unquoted value (dotenv
 * would cut a password there), an invalid name, a NUL byte.
 */
export function parseEnvFile(text: string, fileLabel: string): Assignment[] {
  // dotenv reads a lone CR as a line break too: line numbers count them alike.
  const normalised = text.replace(/\r\n?/g, '\n');
  const lines = normalised.split('\n');
  // The file is at fault, not the application: name it and the line, not the (maybe secret) value.
  const nulLine = lines.findIndex((l) => l.includes('\0'));
  if (nulLine >= 0) {
    throw CoreErrors.ENV_VALUE_INVALID.create({
      message: `${fileLabel}:${nulLine + 1} contains a NUL byte; an env file is text, and no process environment can hold one.`,
      file: fileLabel,
    });
  }
  const out: Assignment[] = [];
  for (const entry of envFileEntries(lines, fileLabel)) {
    // Each entry on its own, so that every value keeps the line it was written on.
    const parsed = dotenv.parse(entry.text);
    const keys = Object.keys(parsed);
    if (keys.length !== 1 || keys[0] !== entry.name) throw unreadable(entry.origin, fileLabel, entry.name);
    out.push({ name: entry.name, value: parsed[entry.name] as string, origin: entry.origin });
  }
  // And the file as a whole: what dotenv.parse gives the application, the last assignment of a name winning.
  const whole = dotenv.parse(normalised);
  const last = new Map(out.map((a) => [a.name, a]));
  const mismatch = [...last.values()].find((a) => !Object.hasOwn(whole, a.name) || whole[a.name] !== a.value);
  if (mismatch !== undefined || Object.keys(whole).length !== last.size) {
    throw unreadable(mismatch?.origin ?? fileLabel, fileLabel, mismatch?.name);
  }
  return out;
}

interface EnvFileEntry {
  readonly name: string;
  /** The entry's lines: one, or more for a quoted value that spans lines. */
  readonly text: string;
  readonly origin: string;
}

// dotenv's start of an assignment: spaces, an optional "export ", a key of letters, digits, "_", "." or "-", "=".
const ENTRY = /^\s*(?:export\s+)?([\w.-]+)\s*=/;

/**
 * The assignments of an env file and their lines, where dotenv's parser finds them;
 * refuses what dotenv would skip or cut without a word.
 */
function envFileEntries(lines: readonly string[], fileLabel: string): EnvFileEntry[] {
  const entries: EnvFileEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (/^\s*(?:#|$)/.test(line)) continue;
    const origin = `${fileLabel}:${i + 1}`;
    const m = ENTRY.exec(line);
    if (!m) throw notAnAssignment(line, origin, fileLabel);
    const name = m[1] as string;
    assertValidVariableName(name, origin);
    const rest = line.slice(m[0].length);
    const quote = /^\s*(['"`])/.exec(rest);
    if (quote) {
      const last = closingLine(lines, i, m[0].length + quote[0].length - 1);
      if (last < 0) {
        throw CoreErrors.ENV_MALFORMED_ASSIGNMENT.create({
          message: `${origin}: the value of ${name} opens a ${quote[1]} quote that is never closed at the end of a line (after the closing quote, only spaces and a # comment may follow).`,
          file: fileLabel,
          variable: name,
        });
      }
      entries.push({ name, text: lines.slice(i, last + 1).join('\n'), origin });
      i = last;
      continue;
    }
    const hash = rest.indexOf('#');
    if (hash >= 0 && (hash === 0 || !/\s/.test(rest[hash - 1] as string))) {
      throw CoreErrors.ENV_MALFORMED_ASSIGNMENT.create({
        message: `${origin}: the value of ${name} contains a "#" that is not quoted, where an env file's comment starts (the value would be cut there). Quote the value: ${name}="…" or ${name}='…'.`,
        file: fileLabel,
        variable: name,
      });
    }
    entries.push({ name, text: line, origin });
  }
  return entries;
}

/**
 * The line on which dotenv closes the quoted value opened at `lines[first][at]`, or -1.
 * dotenv's expression takes the first quote not preceded by "\", else (backtracking) an
 * escaped one, latest first, provided only spaces and a # comment follow it on its line.
 */
function closingLine(lines: readonly string[], first: number, at: number): number {
  const quote = (lines[first] as string)[at] as string;
  const candidates: { line: number; column: number }[] = [];
  for (let i = first; i < lines.length; i++) {
    const line = lines[i] as string;
    for (let c = line.indexOf(quote, i === first ? at + 1 : 0); c >= 0; c = line.indexOf(quote, c + 1)) {
      const escaped = c > 0 && line[c - 1] === '\\';
      candidates.push({ line: i, column: c });
      if (!escaped) return pick(lines, candidates);
    }
  }
  return pick(lines, candidates);
}

function pick(lines: readonly string[], candidates: readonly { line: number; column: number }[]): number {
  for (let k = candidates.length - 1; k >= 0; k--) {
    const { line, column } = candidates[k] as { line: number; column: number };
    if (/^\s*(?:#.*)?$/.test((lines[line] as string).slice(column + 1))) return line;
  }
  return -1;
}

function notAnAssignment(line: string, origin: string, fileLabel: string) {
  const body = line.trim().replace(/^export\s+/, '');
  const eq = body.indexOf('=');
  // A name dotenv cannot read ("MY VAR=", control characters): named as --env names it.
  if (eq > 0) assertValidVariableName(body.slice(0, eq).trim(), origin);
  // Without "=" nothing tells a name from a value (a secret pasted alone): none of it is shown.
  return CoreErrors.ENV_MALFORMED_ASSIGNMENT.create({ message: `${origin}: expected NAME=VALUE${eq === 0 ? ', got an empty name' : ''}.`, file: fileLabel });
}

function unreadable(origin: string, fileLabel: string, name: string | undefined) {
  return CoreErrors.ENV_MALFORMED_ASSIGNMENT.create({
    message: `${origin}: ${name === undefined ? 'the file' : `the value of ${name}`} is read differently line by line and as a whole by dotenv's parser, the env-file format runplan reads; write each variable as NAME=VALUE on its own line, quoting a value that spans lines.`,
    file: fileLabel,
    ...(name === undefined ? {} : { variable: name }),
  });
}
