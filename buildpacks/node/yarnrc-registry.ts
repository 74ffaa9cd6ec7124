import type { Document, Scalar, YAMLMap } from 'yaml';
import { decide, type Decision, type OverriddenSource, type RunplanError } from '../../src/kit/index.js';
import { NodeErrors } from './errors.js';
import { assertNoSecretInAddress, parseRegistry } from './npmrc.js';

export interface YarnRegistryInput {
  /** CC_NPM_REGISTRY: a host, optionally with port, path or scheme. */
  readonly ccNpmRegistry?: string | undefined;
  /** The registry npm is configured with on this host, read only when needed. */
  readonly configuredRegistry: () => Promise<string>;
  /** Variables for Yarn's ${NAME} references in the application's .yarnrc.yml. */
  readonly lookup: (name: string) => string | undefined;
  /** Whether a variable is a secret: its value must not become part of a registry address. */
  readonly isSecret?: (name: string) => boolean;
}

/**
 * Stands for the token in the YAML document until the written text is cut around
 * it, where the file gets NPM_TOKEN as a reference: the value is never in the plan.
 */
export const TOKEN_MARK = 'runplan-npm-token-mark-7c41e9';

/**
 * The token goes between double quotes in .yarnrc.yml, escaped as YAML reads it
 * (a quote, a backslash, a control character: the plan's `yaml-double-quoted`).
 * What no escape helps is refused by name only, when planning: Yarn replaces
 * ${NAME} in every string it reads there, with no way to write a literal "${"; a
 * lone surrogate is no character a UTF-8 file can hold; a line break or NUL is
 * refused in any generated file.
 */
export function assertTokenFitsYarnrc(token: string): void {
  if (!/[\r\n\0]|\p{Cs}|\$\{/u.test(token)) return;
  throw NodeErrors.NODE_NPM_TOKEN_INVALID.create({
    message: 'NPM_TOKEN contains "${", a lone surrogate or a line break, which Yarn would not read back as the token from the generated .yarnrc.yml; the value is not shown.',
    variable: 'NPM_TOKEN',
  });
}

/** Yarn's `${NAME}`, `${NAME-fallback}` and `${NAME:-fallback}`, as Yarn expands them in .yarnrc.yml strings. */
function interpolate(value: string, lookup: YarnRegistryInput['lookup']): string {
  return value.replace(/\$\{(\w+)(?:(:?)-([^}]*))?\}/g, (_, name: string, colon: string | undefined, fallback: string | undefined) => {
    const v = lookup(name);
    if (fallback === undefined) return v ?? '';
    return v === undefined || (colon === ':' && v === '') ? fallback : v;
  });
}

/** host[:port][/path] of a registry URL the application wrote, undefined when it is not one. */
function hostOf(value: unknown, lookup: YarnRegistryInput['lookup']): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return parseRegistry(interpolate(value, lookup)).hostPath;
  } catch {
    return undefined;
  }
}

/** A registry address shown in the plan, unless it carries credentials (user:password@). */
function shown(value: unknown): string | null {
  return typeof value === 'string' && !/^(?:[a-z][a-z0-9+.-]*:\/\/)?[^/]*@/i.test(value.trim()) ? value : null;
}

/**
 * NPM_TOKEN for Yarn 2+, which reads .yarnrc.yml and not .npmrc (specification,
 * Node rule 9, as runplan extends it to every package manager). The token is the
 * credential of one registry, as .npmrc's `//host/:_authToken` line is: it goes
 * into `npmRegistries["//host"]` with npmAlwaysAuth (Yarn matches that key whatever
 * the scheme), never into the top-level npmAuthToken, which Yarn would send to
 * every registry, public ones included. The host is CC_NPM_REGISTRY's, else the
 * application's own npmRegistryServer, else the registry npm is configured with;
 * npmRegistryServer is set to it unless the application's file already routes
 * packages there (top level or a scope of npmScopes, kept as written). Edits
 * `doc` in place; the token itself is TOKEN_MARK, between double quotes.
 */
export async function applyYarnRegistry(doc: Document, input: YarnRegistryInput, invalid: (why: string) => RunplanError): Promise<Decision> {
  const { isMap, isScalar, isSeq } = await import('yaml');
  const top = doc.contents as YAMLMap;
  const name = (key: unknown) => String(isScalar(key) ? key.value : key);
  const pairs = (map: YAMLMap, key: string) => map.items.filter((p) => name(p.key) === key);
  const single = (key: string) => {
    const found = pairs(top, key);
    if (found.length > 1) throw invalid(`sets ${key} ${found.length} times; Yarn reads only one of them. Keep one.`);
    return found[0]?.value;
  };
  const overridden: OverriddenSource[] = [];

  const explicit = input.ccNpmRegistry?.trim();
  const appServer = top.get('npmRegistryServer');
  if (typeof appServer === 'string') assertNoSecretInAddress(appServer, 'npmRegistryServer', '.yarnrc.yml', input.isSecret);
  let scheme: string;
  let hostPath: string;
  let source: string;
  let why: string;
  if (explicit) {
    ({ scheme, hostPath } = parseRegistry(explicit, 'CC_NPM_REGISTRY'));
    source = 'env CC_NPM_REGISTRY';
    why = 'CC_NPM_REGISTRY names the host';
  } else if (hostOf(appServer, input.lookup) !== undefined) {
    ({ scheme, hostPath } = parseRegistry(interpolate(appServer as string, input.lookup)));
    source = "the application's .yarnrc.yml npmRegistryServer";
    why = "CC_NPM_REGISTRY is unset, so the application's own default registry (npmRegistryServer) is used";
  } else {
    ({ scheme, hostPath } = parseRegistry(await input.configuredRegistry()));
    source = 'the registry npm is configured with on this host';
    why = 'CC_NPM_REGISTRY is unset, so the default registry is used';
  }
  const url = `${scheme}://${hostPath}`;

  const scopes = single('npmScopes');
  const scopeMaps = isMap(scopes) ? scopes.items.filter((p) => isMap(p.value)).map((p) => ({ scope: name(p.key), map: p.value as YAMLMap })) : [];
  for (const { scope, map } of scopeMaps) {
    const server = map.get('npmRegistryServer');
    if (typeof server === 'string') assertNoSecretInAddress(server, `npmScopes.${scope}.npmRegistryServer`, '.yarnrc.yml', input.isSecret);
  }
  const routedScopes = scopeMaps.filter((s) => hostOf(s.map.get('npmRegistryServer'), input.lookup) === hostPath);
  const routed = hostOf(appServer, input.lookup) === hostPath || routedScopes.length > 0;

  const reason = [`NPM_TOKEN is set: .yarnrc.yml gets the auth token for ${hostPath} under npmRegistries "//${hostPath}" with npmAlwaysAuth (Yarn 2+ reads no .npmrc)`, why];
  if (routed) {
    reason.push("the application's .yarnrc.yml already routes packages to it, as written");
  } else {
    while (top.has('npmRegistryServer')) {
      overridden.push({ source: '.yarnrc.yml npmRegistryServer', value: shown(top.get('npmRegistryServer')), reason: `packages come from ${url}, the registry NPM_TOKEN is for` });
      top.delete('npmRegistryServer');
    }
    top.set('npmRegistryServer', url);
    reason.push(`npmRegistryServer is set to ${url}`);
    // Yarn refuses http unless the host is listed; the address saying http is the deployer's (or the host's) choice, as it is for npm.
    if (scheme === 'http') {
      const hostname = hostPath.replace(/[:/].*$/, '');
      const list = single('unsafeHttpWhitelist');
      if (isSeq(list)) {
        if (!list.items.some((i) => name(i) === hostname)) list.add(hostname);
      } else if (list === undefined || list === null) {
        top.set('unsafeHttpWhitelist', doc.createNode([hostname]));
      }
      reason.push(`${hostname} is in unsafeHttpWhitelist, since the registry's address says http`);
    }
  }

  // A scope routed to the host with credentials of its own would have Yarn send those instead of NPM_TOKEN.
  for (const { scope, map } of routedScopes) {
    for (const key of ['npmAuthToken', 'npmAuthIdent']) {
      while (map.has(key)) {
        overridden.push({ source: `.yarnrc.yml npmScopes.${scope}.${key}`, value: null, reason: `NPM_TOKEN is the credential for ${hostPath}` });
        map.delete(key);
      }
    }
  }
  if (scopeMaps.length > 0) reason.push(`the application's ${scopeMaps.length} scope(s) of npmScopes are kept`);
  for (const key of ['npmAuthToken', 'npmAuthIdent']) {
    if (top.has(key)) overridden.push({ source: `.yarnrc.yml ${key}`, value: null, reason: `Yarn no longer sends it to ${hostPath}: the npmRegistries entry for that host comes first` });
  }

  let registries = single('npmRegistries');
  if (registries === undefined || registries === null) {
    registries = doc.createNode({});
    top.set('npmRegistries', registries);
  } else if (!isMap(registries)) {
    throw invalid('npmRegistries must be a mapping of registry addresses to their settings.');
  }
  const registryMap = registries as YAMLMap;
  // Yarn looks an address up as written, then without its scheme: every spelling of the host goes.
  const normalise = (key: string) =>
    key
      .replace(/^[a-z][a-z0-9+.-]*:/i, '')
      .replace(/\/+$/, '')
      .toLowerCase();
  for (const pair of [...registryMap.items]) {
    const key = name(pair.key);
    if (normalise(key) !== `//${hostPath}`) continue;
    overridden.push({ source: `.yarnrc.yml npmRegistries "${key}"`, value: null, reason: `its settings for ${hostPath} are replaced: NPM_TOKEN is the credential for that registry` });
    registryMap.items.splice(registryMap.items.indexOf(pair), 1);
  }
  const entry = doc.createNode({ npmAlwaysAuth: true }) as YAMLMap;
  const mark = doc.createNode(TOKEN_MARK) as Scalar;
  mark.type = 'QUOTE_DOUBLE';
  entry.set('npmAuthToken', mark);
  registryMap.set(`//${hostPath}`, entry);
  // Block style down to the token, so that it sits on a line of its own.
  for (const map of [top, registryMap, entry]) map.flow = false;

  return decide({
    id: 'node.yarn-registry',
    subject: 'Private registry (Yarn 2+)',
    requests: [{ source, value: explicit ?? null }],
    resolved: `${url}/`,
    reason: reason.join('; '),
    lost: overridden,
  });
}
