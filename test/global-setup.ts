// `vitest` run directly (not through `npm test`) still tests a current dist/.
export default async function setup(): Promise<void> {
  // @ts-expect-error: plain ES module without type declarations
  const { ensureBuilt } = await import('../scripts/bootstrap.mjs');
  ensureBuilt();
}
