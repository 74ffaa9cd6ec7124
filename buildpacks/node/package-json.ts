import { type FileSource, lineExcerpt } from '../../src/kit/index.js';
import { NodeErrors } from './errors.js';
import { findJsonFault, nestingDepth } from './json-syntax.js';

/** The fields of package.json the buildpack reads; everything else is kept as-is. */
export interface PackageJson {
  readonly name?: string;
  readonly main?: string;
  readonly scripts?: Readonly<Record<string, string>>;
  readonly engines?: Readonly<Record<string, string>>;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly packageManager?: string;
  readonly [key: string]: unknown;
}

export const PACKAGE_JSON = 'package.json';

export async function readPackageJson(files: FileSource): Promise<PackageJson> {
  const text = await files.readText(PACKAGE_JSON);
  if (text === undefined) {
    throw NodeErrors.NODE_PACKAGE_JSON_MISSING.create({ message: `no package.json in ${files.label}.`, file: PACKAGE_JSON });
  }
  return parsePackageJson(text);
}

/** Deeper than any real package.json; a hostile one nesting 100,000 arrays would overflow the stack of whatever walks it. */
const MAX_PACKAGE_JSON_DEPTH = 64;

/** Parses package.json; a syntax error names the line and column with the offending line shown. */
export function parsePackageJson(text: string): PackageJson {
  let value: unknown;
  // A byte-order mark is legal in a file but not in JSON.
  const json = text.replace(/^\uFEFF/, '');
  try {
    value = JSON.parse(json);
  } catch (error) {
    // V8 gives no position for "Unexpected token" and the end of the file for an unterminated string: find the real one.
    const fault = findJsonFault(json);
    const offset = (fault?.offset ?? errorOffset((error as Error).message, json)) + (json.length === text.length ? 0 : 1);
    const { line, column } = lineAndColumn(text, offset);
    const detail = fault?.reason ?? 'not valid JSON';
    throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({
      message: `package.json is not valid JSON at line ${line}, column ${column}: ${detail}.\n${excerpt(text, line, column)}`,
      file: PACKAGE_JSON,
      details: { line, column, offset },
    });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({
      message: `package.json must hold a JSON object, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}.`,
      file: PACKAGE_JSON,
    });
  }
  if (nestingDepth(value, MAX_PACKAGE_JSON_DEPTH) > MAX_PACKAGE_JSON_DEPTH) {
    throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({ message: `package.json nests arrays or objects more than ${MAX_PACKAGE_JSON_DEPTH} levels deep.`, file: PACKAGE_JSON });
  }
  const pkg = value as Record<string, unknown>;
  for (const field of ['scripts', 'engines', 'dependencies', 'devDependencies'] as const) {
    const v = pkg[field];
    if (v !== undefined && (v === null || typeof v !== 'object' || Array.isArray(v))) {
      throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({ message: `package.json field "${field}" must be an object, not ${describeJson(v)}.`, file: PACKAGE_JSON });
    }
  }
  for (const field of ['main', 'packageManager'] as const) {
    if (pkg[field] !== undefined && typeof pkg[field] !== 'string') {
      throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({ message: `package.json field "${field}" must be a string, not ${describeJson(pkg[field])}.`, file: PACKAGE_JSON });
    }
  }
  const start = (pkg.scripts as Record<string, unknown> | undefined)?.start;
  if (start !== undefined && typeof start !== 'string') {
    throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({ message: `package.json field "scripts.start" must be a string, not ${describeJson(start)}.`, file: PACKAGE_JSON });
  }
  for (const [tool, example] of [
    ['node', '22.x'],
    ['npm', '^11.6.0'],
  ] as const) {
    const engine = (pkg.engines as Record<string, unknown> | undefined)?.[tool];
    if (engine !== undefined && typeof engine !== 'string') {
      throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({
        message: `package.json field "engines.${tool}" must be a string such as "${example}", not ${describeJson(engine)}.`,
        file: PACKAGE_JSON,
        fix: `Write engines.${tool} as a string holding a version or range, e.g. "engines": { "${tool}": "${example}" }.`,
      });
    }
  }
  return pkg as PackageJson;
}

/** "a number", "null", "an array"…: what a JSON value is, for messages (never the value itself). */
function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** Where the parser stopped, from the messages of the V8 versions Node ≥ 20 ships. */
function errorOffset(message: string, text: string): number {
  const position = /at position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  const lineCol = /\(line (\d+) column (\d+)\)/.exec(message);
  if (lineCol) {
    const lines = text.split('\n');
    const before = lines.slice(0, Number(lineCol[1]) - 1).reduce((n, l) => n + l.length + 1, 0);
    return before + Number(lineCol[2]) - 1;
  }
  return text.length; // "Unexpected end of JSON input"
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at >= 0 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++;
    lineStart = at + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * The faulty line under the message, with a caret under the column: at most
 * EXCERPT_WIDTH characters around the column (a minified or hostile file may be
 * one line of megabytes), control characters escaped.
 */
function excerpt(text: string, line: number, column: number): string {
  const lineStart = nthLineStart(text, line);
  const lineEnd = text.indexOf('\n', lineStart);
  const content = text.slice(lineStart, lineEnd < 0 ? text.length : lineEnd).replace(/\r$/, '');
  const from = Math.max(0, column - 1 - Math.floor(EXCERPT_WIDTH / 2));
  const before = lineExcerpt(content.slice(from, column - 1), EXCERPT_WIDTH);
  const shown = `${from > 0 ? '…' : ''}${before}${lineExcerpt(content.slice(column - 1), EXCERPT_WIDTH - before.length)}`;
  const gutter = String(line).length;
  return `  ${line} | ${shown}\n  ${' '.repeat(gutter)} | ${' '.repeat((from > 0 ? 1 : 0) + before.length)}^`;
}

const EXCERPT_WIDTH = 100;

function nthLineStart(text: string, line: number): number {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf('\n', at);
    if (next < 0) return text.length;
    at = next + 1;
  }
  return at;
}
