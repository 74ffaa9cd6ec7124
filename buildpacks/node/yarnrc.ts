import type { Decision, OverriddenSource, PlannedFile } from '../../src/kit/index.js';
import { NodeErrors } from './errors.js';
import { yarnReleasePath } from './tools.js';
import { credentialsAfterBuild } from './npmrc.js';
import { applyYarnRegistry, TOKEN_MARK, type YarnRegistryInput } from './yarnrc-registry.js';

/** Top-level keys runplan sets for Yarn 2+; the application's own values for them are replaced. */
const MANAGED_KEYS = ['yarnPath', 'nodeLinker'] as const;

/**
 * .yarnrc.yml for Yarn 2+: the application's own settings kept, plus yarnPath to
 * the pinned release and the node-modules linker, so that `npm start` and
 * `node <main>` find the dependencies in node_modules as with every other tool.
 * With `registry` (NPM_TOKEN is set), also the private registry and its token
 * (yarnrc-registry.ts): the file then holds a secret, as .npmrc does.
 */
export async function planYarnrc(
  appText: string | undefined,
  tool: 'yarn2' | 'yarn-berry',
  version: string,
  registry?: YarnRegistryInput,
): Promise<{ file: PlannedFile; overridden: OverriddenSource[]; decision?: Decision }> {
  // Loaded only for Yarn 2+ applications: `yaml` is a good part of the CLI's start-up otherwise.
  const { isMap, parseDocument } = await import('yaml');
  // Edited as YAML rather than line by line: a flow mapping ("{}") or a quoted key ("yarnPath": …)
  // would otherwise give Yarn a file it cannot parse, or one holding runplan's keys twice.
  const doc = parseDocument(appText ?? '', { uniqueKeys: false });
  const error = doc.errors[0];
  const invalid = (why: string) => NodeErrors.NODE_YARNRC_INVALID.create({ message: `.yarnrc.yml ${why}`, file: '.yarnrc.yml' });
  if (error) throw invalid(`is not valid YAML: ${error.message.split('\n')[0]?.slice(0, 200)}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw invalid('must hold a mapping of settings (such as "enableTelemetry: false").');
  // An empty or comment-only file: an empty mapping to set the keys in (createNode's type is the unparsed node's).
  if (doc.contents === null) doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  const overridden: OverriddenSource[] = [];
  for (const key of MANAGED_KEYS) {
    // A key written twice: every occurrence goes.
    while (doc.has(key)) {
      overridden.push({ source: `.yarnrc.yml ${key}`, value: String(doc.get(key, true)), reason: `runplan sets ${key} to run the planned Yarn with node_modules` });
      doc.delete(key);
    }
  }
  doc.set('yarnPath', yarnReleasePath(tool));
  doc.set('nodeLinker', 'node-modules');
  const written = () => {
    let text: string;
    try {
      text = doc.toString();
    } catch (cause) {
      // An alias without its anchor ("key: *nowhere") is found only when the file is written out.
      throw invalid(`cannot be written back: ${(cause as Error).message.split('\n')[0]?.slice(0, 200)}`);
    }
    // Odd comments (a lone CR) do not always survive yaml's writing: never hand Yarn a file it cannot parse.
    const reread = parseDocument(text, { uniqueKeys: false }).errors[0];
    if (reread) throw invalid(`cannot be written back as valid YAML (${reread.message.split('\n')[0]?.slice(0, 200)}); look for a carriage return or an unusual comment`);
    return text;
  };
  // The file as it is without NPM_TOKEN: what the build leaves of it once its steps are done.
  const withoutToken = registry === undefined ? undefined : written();
  const decision = registry === undefined ? undefined : await applyYarnRegistry(doc, registry, invalid);
  const text = written();
  const reason = `Yarn ${version} through yarnPath, with the node-modules linker`;
  if (decision === undefined) {
    return { overridden, file: { path: '.yarnrc.yml', phase: 'build', mode: 0o644, secret: false, content: [{ text }], reason } };
  }
  // The token's place: one double-quoted value on a line of its own (applyYarnRegistry writes it so).
  const at = text.indexOf(TOKEN_MARK);
  if (at < 0 || text.indexOf(TOKEN_MARK, at + 1) >= 0 || !/\n\s*npmAuthToken: "$/.test(text.slice(0, at)) || !text.startsWith('"\n', at + TOKEN_MARK.length)) {
    throw invalid(`cannot hold the auth token on a line of its own${at >= 0 ? ` (it contains the text ${TOKEN_MARK}, which runplan uses in its place)` : ''}.`);
  }
  return {
    overridden,
    decision,
    file: {
      path: '.yarnrc.yml',
      phase: 'build',
      mode: 0o600,
      secret: true,
      content: [{ text: text.slice(0, at) }, { env: 'NPM_TOKEN', escape: 'yaml-double-quoted' }, { text: text.slice(at + TOKEN_MARK.length) }],
      reason: `${reason}, and NPM_TOKEN for the registry ${decision.resolved} (specification, Node rule 9)`,
      ...credentialsAfterBuild('.yarnrc.yml', withoutToken, registry?.lookup('NPM_TOKEN')),
    },
  };
}
