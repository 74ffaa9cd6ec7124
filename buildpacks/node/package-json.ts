import type { FileSource } from '../../src/files/file-source.js';
import { NodeErrors } from './errors.js';

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

/** Parses package.json; a syntax error names the line and column with the offending line shown. */
export function parsePackageJson(text: string): PackageJson {
  let value: unknown;
  try {
    // A byte-order mark is legal in a file but not in JSON.
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    const offset = errorOffset((error as Error).message, text);
    const { line, column } = lineAndColumn(text, offset);
    const detail = (error as Error).message.replace(/\s*(in JSON )?at position \d+.*$/s, '').replace(/\s*\(line \d+ column \d+\)$/, '');
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
  const pkg = value as Record<string, unknown>;
  for (const field of ['scripts', 'engines', 'dependencies', 'devDependencies'] as const) {
    const v = pkg[field];
    if (v !== undefined && (v === null || typeof v !== 'object' || Array.isArray(v))) {
      throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({ message: `package.json field "${field}" must be an object.`, file: PACKAGE_JSON });
    }
  }
  for (const field of ['main', 'packageManager'] as const) {
    if (pkg[field] !== undefined && typeof pkg[field] !== 'string') {
      throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({ message: `package.json field "${field}" must be a string.`, file: PACKAGE_JSON });
    }
  }
  const start = (pkg.scripts as Record<string, unknown> | undefined)?.start;
  if (start !== undefined && typeof start !== 'string') {
    throw NodeErrors.NODE_PACKAGE_JSON_INVALID.create({ message: 'package.json field "scripts.start" must be a string.', file: PACKAGE_JSON });
  }
  return pkg as PackageJson;
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

export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { line, column };
}

function excerpt(text: string, line: number, column: number): string {
  const content = text.split('\n')[line - 1] ?? '';
  const gutter = String(line).length;
  return `  ${line} | ${content}\n  ${' '.repeat(gutter)} | ${' '.repeat(Math.max(0, column - 1))}^`;
}
