/**
 * Whether a .gitignore keeps node_modules out of the repository (specification,
 * Node rule 2): any pattern git would apply to the root node_modules directory.
 */
export function ignoresNodeModules(gitignore: string | undefined): boolean {
  if (gitignore === undefined) return false;
  return gitignore
    .split(/\r?\n/)
    .map((l) => l.trim())
    .some((l) => /^\/?(\*\*\/)?node_modules\/?(\*\*?)?$/.test(l));
}
