import ignore from 'ignore';

/** Lines that ignore the root node_modules in any .gitignore: what most applications write. */
const PLAIN_RULES = new Set(['node_modules', '/node_modules', 'node_modules/', '/node_modules/']);

/**
 * Whether a .gitignore keeps node_modules out of the repository (specification,
 * Node rule 2), as git reads it (the `ignore` package: negation, anchoring, `**`,
 * escapes, trailing spaces): the root node_modules directory is ignored, or what
 * a dependency puts in it (`node_modules/*`).
 */
export function ignoresNodeModules(gitignore: string | undefined): boolean {
  if (gitignore === undefined) return false;
  // Without a negation, a plain rule decides: the `ignore` package compiles every line to regular
  // expressions, a visible share of planning a new application.
  const lines = gitignore.split('\n');
  if (lines.some((line) => PLAIN_RULES.has(line)) && !lines.some((line) => line.startsWith('!'))) return true;
  const rules = ignore().add(gitignore);
  return rules.ignores('node_modules/') || rules.ignores('node_modules/a-dependency/package.json');
}
