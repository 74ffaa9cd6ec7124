import type { Detector } from '../../src/kit/index.js';
import { PACKAGE_JSON } from './package-json.js';

/** A Node.js application is one with a package.json at its root (specification, Node rule 1). */
export const nodeDetector: Detector = {
  async detect(files) {
    if (await files.exists(PACKAGE_JSON)) return { status: 'pass', evidence: ['package.json found'] };
    return { status: 'skip', evidence: ['no package.json'] };
  },
};
