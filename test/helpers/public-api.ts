import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from './cli.js';

/**
 * The package's entry points (package.json "exports" with code) and the source
 * each is built from (tsup.config.ts). A new entry point is added here and in
 * api/exports.txt, or the public API test fails.
 */
export const ENTRY_POINTS: Readonly<Record<string, string>> = {
  runplan: 'src/index.ts',
  'runplan/buildpack': 'src/kit/index.ts',
  'runplan/process': 'src/process/entry.ts',
  'runplan/process/attached': 'src/process/attached-entry.ts',
  'runplan/buildpacks/node': 'buildpacks/node/index.ts',
  'runplan/buildpacks/ruby': 'buildpacks/ruby/index.ts',
  'runplan/buildpacks/play1': 'buildpacks/play1/index.ts',
  'runplan/engines/docker': 'src/engines/entries/docker.ts',
  'runplan/engines/swarm': 'src/engines/entries/swarm.ts',
  'runplan/engines/kubernetes': 'src/engines/entries/kubernetes.ts',
  'runplan/engines': 'src/compose/engines-entry.ts',
};

/** The reviewed list of every entry point's exports. */
export const REVIEWED_LIST = join(ROOT, 'api', 'exports.txt');

export interface ExportedName {
  readonly name: string;
  /** function, class or const (a value, there at run time); interface or type (declarations only). */
  readonly kind: 'function' | 'class' | 'const' | 'enum' | 'interface' | 'type' | 'namespace';
  /** Whether its declaration has a doc comment (what typedoc and an editor show). */
  readonly documented: boolean;
  /** Files that declare it, relative to the root. */
  readonly declaredIn: readonly string[];
}

let program: ts.Program | undefined;

/** One program over every entry point: the checker follows each re-export to its declaration. */
function entryProgram(): ts.Program {
  if (program) return program;
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (f) => readFileSync(f, 'utf8'));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  program = ts.createProgram(
    Object.values(ENTRY_POINTS).map((f) => join(ROOT, f)),
    { ...options, noEmit: true, skipLibCheck: true },
  );
  return program;
}

/** Whether the chain of re-exports from `symbol` to its declaration passes through `export type`. */
function typeOnlyExport(checker: ts.TypeChecker, symbol: ts.Symbol): boolean {
  let current: ts.Symbol | undefined = symbol;
  while (current && current.flags & ts.SymbolFlags.Alias) {
    for (const d of current.declarations ?? []) {
      if (ts.isTypeOnlyImportOrExportDeclaration(d)) return true;
      if (ts.isExportSpecifier(d) && d.parent.parent.isTypeOnly) return true;
    }
    current = checker.getImmediateAliasedSymbol(current);
  }
  return false;
}

/**
 * Whether an `export { name }` on the way to the declaration has a doc comment of its
 * own: an entry point may document what it publishes of a module it does not own.
 */
function documentedExport(checker: ts.TypeChecker, symbol: ts.Symbol): boolean {
  let current: ts.Symbol | undefined = symbol;
  while (current && current.flags & ts.SymbolFlags.Alias) {
    if ((current.declarations ?? []).some((d) => ts.isExportSpecifier(d) && ts.getJSDocCommentsAndTags(d).length > 0)) return true;
    current = checker.getImmediateAliasedSymbol(current);
  }
  return false;
}

function kindOf(target: ts.Symbol, typeOnly: boolean): ExportedName['kind'] {
  const f = target.flags;
  if (!typeOnly) {
    if (f & ts.SymbolFlags.Class) return 'class';
    if (f & ts.SymbolFlags.Function) return 'function';
    if (f & ts.SymbolFlags.Enum) return 'enum';
    if (f & ts.SymbolFlags.Variable) return 'const';
    if (f & ts.SymbolFlags.ValueModule) return 'namespace';
  }
  return f & ts.SymbolFlags.Interface ? 'interface' : 'type';
}

/**
 * The names an entry point has only through `export type * from`: there as types,
 * absent at run time. A name it also exports by name (`export { X }`) is that export's.
 */
function typeStarNames(checker: ts.TypeChecker, source: ts.SourceFile): Set<string> {
  const named = new Set<string>();
  const starred = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    if (statement.exportClause && ts.isNamedExports(statement.exportClause)) for (const e of statement.exportClause.elements) named.add(e.name.text);
    else if (statement.isTypeOnly && !statement.exportClause && statement.moduleSpecifier) {
      const module = checker.getSymbolAtLocation(statement.moduleSpecifier);
      for (const s of module ? checker.getExportsOfModule(module) : []) starred.add(s.name);
    }
  }
  return new Set([...starred].filter((name) => !named.has(name)));
}

/** Every name an entry point exports, sorted, with what it is and whether it is documented. */
export function entryExports(entry: string): ExportedName[] {
  const file = ENTRY_POINTS[entry];
  if (!file) throw new Error(`${entry} is not an entry point of ENTRY_POINTS`);
  const p = entryProgram();
  const checker = p.getTypeChecker();
  const source = p.getSourceFile(join(ROOT, file));
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`${file} is not a module`);
  const typesOnly = typeStarNames(checker, source);
  return checker
    .getExportsOfModule(moduleSymbol)
    .map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const declarations = target.declarations ?? [];
      return {
        name: symbol.name,
        kind: kindOf(target, typesOnly.has(symbol.name) || typeOnlyExport(checker, symbol)),
        documented: target.getDocumentationComment(checker).length > 0 || target.getJsDocTags(checker).length > 0 || documentedExport(checker, symbol),
        declaredIn: [...new Set(declarations.map((d) => relative(ROOT, d.getSourceFile().fileName)))],
      };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The reviewed list's text for the exports as they are: one section per entry point, one `name kind` line per export. */
export function renderExportList(exports: Readonly<Record<string, readonly ExportedName[]>>): string {
  const sections = Object.entries(exports).map(([entry, names]) => [`[${entry}]`, ...names.map((n) => `${n.name} ${n.kind}`)].join('\n'));
  return `${LIST_HEADER}\n${sections.join('\n\n')}\n`;
}

const LIST_HEADER = `# The public API: every name each entry point of the package exports (package.json "exports").
# Reviewed by hand: test/unit/public-api.test.ts fails when an entry point exports a name
# not listed here (or stops exporting one), or a name without a doc comment. A change to
# this file is a change to the API: say why in the commit. RUNPLAN_UPDATE_API=1 rewrites it.
`;

/** The reviewed list as written: entry point -> "name kind" lines. */
export function readExportList(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let section: string[] | undefined;
  for (const line of readFileSync(REVIEWED_LIST, 'utf8').split('\n')) {
    const header = /^\[(.+)\]$/.exec(line);
    if (header) out[header[1] as string] = section = [];
    else if (line.trim() !== '' && !line.startsWith('#')) section?.push(line.trim());
  }
  return out;
}
