import type { OverriddenSource, PlannedFile } from '../../src/plan/schema.js';
import { yarnReleasePath } from './tools.js';

/** Top-level keys runplan sets for Yarn 2+; the application's own values for them are replaced. */
const MANAGED_KEYS = ['yarnPath', 'nodeLinker'] as const;

/**
 * .yarnrc.yml for Yarn 2+: the application's own settings kept, plus yarnPath to
 * the pinned release and the node-modules linker, so that `npm start` and
 * `node <main>` find the dependencies in node_modules as with every other tool.
 */
export function planYarnrc(appText: string | undefined, tool: 'yarn2' | 'yarn-berry', version: string): { file: PlannedFile; overridden: OverriddenSource[] } {
  const overridden: OverriddenSource[] = [];
  const kept = (appText ?? '').split(/\r?\n/).filter((line) => {
    const key = MANAGED_KEYS.find((k) => new RegExp(`^${k}\\s*:`).test(line));
    if (key) overridden.push({ source: `.yarnrc.yml ${key}`, value: line.slice(line.indexOf(':') + 1).trim(), reason: `runplan sets ${key} to run the planned Yarn with node_modules` });
    return key === undefined;
  });
  while (kept.length > 0 && kept[kept.length - 1]?.trim() === '') kept.pop();
  const text = [...kept, `yarnPath: ${yarnReleasePath(tool)}`, 'nodeLinker: node-modules'].join('\n');
  return {
    overridden,
    file: { path: '.yarnrc.yml', phase: 'build', mode: 0o644, secret: false, content: [{ text: `${text}\n` }], reason: `Yarn ${version} through yarnPath, with the node-modules linker` },
  };
}
