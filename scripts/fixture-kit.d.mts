// Types of fixture-kit.mjs for the TypeScript tests.
export interface KitFixture<E = Record<string, unknown>> {
  readonly type: string;
  readonly name: string;
  readonly dir: string;
  readonly expect: E;
}
export type PlaceholderResolver = (name: string, argument: string | undefined) => string | undefined;
export const FIXTURES_ROOT: string;
export function listFixtures<E = Record<string, unknown>>(type?: string): KitFixture<E>[];
export function placeholdersIn(value: unknown): string[];
export function fillPlaceholders<T>(value: T, resolve: PlaceholderResolver): T;
export function machinePlaceholder(name: string): string | undefined;
export function prepareCopy(
  fixture: KitFixture<{ readonly shared?: readonly string[]; readonly templates?: readonly string[]; readonly prepare?: readonly (readonly string[])[] }>,
  resolve?: PlaceholderResolver,
  options?: { readonly copy?: boolean },
): { dir: string; cleanup: string | undefined };
