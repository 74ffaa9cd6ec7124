/** Whether an import names the runplan package or one of its entry points (`runplan`, `runplan/buildpack`…). */
export function isRunplanSpecifier(specifier: string): boolean {
  return specifier === 'runplan' || specifier.startsWith('runplan/');
}
