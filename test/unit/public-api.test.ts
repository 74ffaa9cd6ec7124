import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { ENTRY_POINTS, entryExports, type ExportedName, readExportList, renderExportList, REVIEWED_LIST } from '../helpers/public-api.js';

const EXPORTS: Record<string, ExportedName[]> = Object.fromEntries(Object.keys(ENTRY_POINTS).map((entry) => [entry, entryExports(entry)]));

/**
 * The public API is what a user holds in their head (issue 23): every name of
 * every entry point is in the reviewed list (api/exports.txt) and documented.
 * A new export fails here until the list says it, so it is a decision in a
 * diff, never a side effect of `export *`.
 */
describe('the public API', () => {
  if (process.env.RUNPLAN_UPDATE_API === '1') writeFileSync(REVIEWED_LIST, renderExportList(EXPORTS));

  it('lists every entry point of package.json "exports" that has code', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const withCode = Object.entries(pkg.exports).filter(([, target]) => typeof target === 'object');
    expect(withCode.map(([subpath]) => join('runplan', subpath))).toEqual(Object.keys(ENTRY_POINTS));
    expect(Object.keys(readExportList())).toEqual(Object.keys(ENTRY_POINTS));
  });

  it.each(Object.keys(ENTRY_POINTS))('%s exports exactly the names the reviewed list gives (api/exports.txt)', (entry) => {
    expect(EXPORTS[entry]?.map((n) => `${n.name} ${n.kind}`)).toEqual(readExportList()[entry]);
  });

  it.each(Object.keys(ENTRY_POINTS))('every name %s exports has a doc comment', (entry) => {
    expect(EXPORTS[entry]?.filter((n) => !n.documented).map((n) => `${n.name} (${n.declaredIn.join(', ')})`)).toEqual([]);
  });
});
