import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { BuildAction } from '../../src/buildpack/contract.js';
import { NodeErrors } from './errors.js';

/** The candidates `node <main>` would load, in Node's own order for a main entry. */
export function mainCandidates(main: string): string[] {
  return [main, `${main}.js`, `${main}.json`, `${main}.node`, `${main}/index.js`];
}

/** Fails the build when `node <main>` would not find its file (it may be produced by the build). */
export const verifyMain: BuildAction = async (params, { appDir, log }) => {
  const main = String(params.main);
  for (const candidate of mainCandidates(main)) {
    const info = await stat(resolve(appDir, candidate)).catch(() => undefined);
    if (info?.isFile()) {
      log(`main resolves to ${candidate}`);
      return;
    }
  }
  throw NodeErrors.NODE_MAIN_NOT_FOUND.create({
    message: `package.json main is "${main}" but none of ${mainCandidates(main).join(', ')} exists after the build.`,
    file: 'package.json',
  });
};
