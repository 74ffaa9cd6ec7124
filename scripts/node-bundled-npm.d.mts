// Types of node-bundled-npm.mjs for the TypeScript tests.
export interface ChangelogRelease {
  readonly version: string;
  readonly date: string;
  readonly npm: string | undefined;
}
export function releasesOfChangelog(text: string): ChangelogRelease[];
export function bundledNpmOfChangelogs(texts: readonly string[]): ChangelogRelease[];
