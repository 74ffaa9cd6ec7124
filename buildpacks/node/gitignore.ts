import ignore from 'ignore';

/**
 * Whether a .gitignore keeps node_modules out of the repository (specification,
 * Node rule 2), as git reads it (the `ignore` package: negation, anchoring, `**`,
 * escapes, trailing spaces): the root node_modules directory is ignored, or what
 * a dependency puts in it (`node_modules/*`).
 */
export function ignoresNodeModules(gitignore: string | undefined): boolean {
  if (gitignore === undefined) return false;
  const rules = ignore().add(gitignore);
  return rules.ignores('node_modules/') || rules.ignores('node_modules/a-dependency/package.json');
}
