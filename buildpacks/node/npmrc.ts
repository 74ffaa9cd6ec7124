import ini from 'ini';
import { decide, type Decision, type OverriddenSource, type PlannedFile, quoteExcerpt } from '../../src/kit/index.js';
import { NodeErrors } from './errors.js';

export interface NpmrcInput {
  /** CC_NPM_REGISTRY: a host, optionally with port, path or scheme. */
  readonly ccNpmRegistry?: string | undefined;
  /** The registry npm is configured with on this host (`npm config get registry`), read only when needed. */
  readonly configuredRegistry: () => Promise<string>;
  /** The application's own committed .npmrc. */
  readonly appNpmrc?: string | undefined;
  /** Variables for ${NAME} references in the app's .npmrc, as npm expands them. */
  readonly lookup: (name: string) => string | undefined;
  /**
   * Whether the package manager expands ${NAME} in the registry addresses of a
   * project's .npmrc: npm, Yarn 1 and bun do; current pnpm does not (it ignores
   * such a line, since a committed file could send requests, and secrets, elsewhere).
   */
  readonly expandsRegistryVariables?: boolean;
  /** Whether a variable is a secret: its value must not become part of a registry address, which plans and logs show. */
  readonly isSecret?: (name: string) => boolean;
}

export interface NpmrcPlan {
  readonly file: PlannedFile;
  readonly decision: Decision;
  /** host[:port][/path] the token applies to, as in the token line. */
  readonly tokenHost: string;
}

/** "https://r.example.com:8443/npm/" or "r.example.com/npm" → { scheme, hostPath: "r.example.com:8443/npm" }. */
export function parseRegistry(value: string, variable?: string): { scheme: string; hostPath: string } {
  // user:password@host: the password would be printed below and sent in every request's URL.
  if (/^(?:[a-z][a-z0-9+.-]*:\/\/)?[^/]*@/i.test(value.trim())) {
    throw NodeErrors.NODE_NPM_REGISTRY_INVALID.create({
      message: `${variable ?? 'the registry'} holds credentials (user:password@ before the host), which are not shown; the credential is NPM_TOKEN.`,
      ...(variable ? { variable } : {}),
    });
  }
  const m = /^(?:(https?):\/\/)?([A-Za-z0-9.-]+(?::\d{1,5})?)(\/[A-Za-z0-9._~%/-]*)?$/.exec(value.trim());
  if (!m) {
    throw NodeErrors.NODE_NPM_REGISTRY_INVALID.create({
      message: `${variable ?? 'the registry'} is ${quoteExcerpt(value)}, which is not a registry host such as registry.example.com or npm.example.com:4873/path.`,
      ...(variable ? { variable } : {}),
    });
  }
  const path = (m[3] ?? '').replace(/\/+$/, '');
  return { scheme: m[1] ?? 'https', hostPath: `${(m[2] as string).toLowerCase()}${path}` };
}

/**
 * The token is written into .npmrc's `//host/:_authToken=` line, quoted as npm reads
 * it when it must be (the plan's `npmrc-value`): a line break in it would add lines
 * of its own (`script-shell=…`, another registry), and `true`, `false`, `null` or
 * `undefined` npm reads as such however written, never as a string. Refused by name only.
 */
export function assertTokenFitsNpmrc(token: string): void {
  const unreadable = ['true', 'false', 'null', 'undefined'].includes(token.trim());
  if (!/[\r\n\0]/.test(token) && !unreadable) return;
  throw NodeErrors.NODE_NPM_TOKEN_INVALID.create({
    message: unreadable
      ? // Not the words themselves: the redactor hides the token's value, and this is it.
        'NPM_TOKEN is a word that npm reads from .npmrc as a value of its own (a boolean, null or undefined), not as a token; the value is not shown.'
      : 'NPM_TOKEN contains a line break or NUL byte, which would add lines of its own to the generated .npmrc; the value is not shown.',
    variable: 'NPM_TOKEN',
  });
}

// `${NAME}` as npm, pnpm and Yarn write a reference (Yarn's `${NAME:-fallback}` too).
const REFERENCE = /\$\{(\w+)/g;

/**
 * A registry address of the application's `file` that takes a secret variable
 * (`registry=https://${NPM_TOKEN}.example.com/`): the address is shown in the plan's
 * decisions and in logs, and sent in every request's URL. Refused, naming the variable.
 */
export function assertNoSecretInAddress(value: string, key: string, file: string, isSecret: ((name: string) => boolean) | undefined): void {
  for (const [, name] of value.matchAll(REFERENCE)) {
    if (!isSecret?.(name as string)) continue;
    throw NodeErrors.NODE_REGISTRY_ADDRESS_SECRET.create({
      message: `${file} sets ${quoteExcerpt(key)} to an address that takes \${${name}}, a secret variable: the address would carry its value into the plan, the logs and the URL of every request.`,
      file,
      variable: name as string,
    });
  }
}

/**
 * What is left of a file holding NPM_TOKEN once the build steps are done: the file
 * as it is without NPM_TOKEN (`without`: the application's own, or runplan's file
 * without the token; undefined: none, the file goes). The run phase does not
 * install: the token only stays where the application committed it itself
 * (the file then stays as written, the committed token in it).
 */
export function credentialsAfterBuild(path: string, without: string | undefined, token: string | undefined): Pick<PlannedFile, 'afterBuild'> {
  if (token !== undefined && token !== '' && without?.includes(token)) return {};
  const why = "the run phase installs nothing, and the built application's code can read (or serve) its files";
  return {
    afterBuild:
      without === undefined
        ? { action: 'remove', reason: `NPM_TOKEN is for the build steps only: ${path} is removed once they are done; ${why}` }
        : { action: 'replace', text: without, reason: `NPM_TOKEN is for the build steps only: ${path} becomes what it is without NPM_TOKEN once they are done; ${why}` },
  };
}

interface RegistryRoute {
  readonly key: string;
  /** The address with ${NAME} expanded, when the package manager expands it. */
  readonly url: string | undefined;
  readonly hostPath: string | undefined;
  /** Written with ${…}, which the package manager does not expand there. */
  readonly ignored: boolean;
}

/** A `[name]` header as ini finds one: a line of its own, also after a lone CR. */
const isSection = (line: string) => line.split('\r').some((part) => /^\[[^\]]*\]\s*$/.test(part));

/**
 * The registry settings an .npmrc gives at its top level, read with `ini` as npm
 * (and pnpm) read them: `;`/`#` comments, quoted values, comments after a value,
 * the last of a key winning. Lines after a `[section]` header belong to that
 * section, where npm sees no registry and no token.
 */
function topLevelRegistries(lines: readonly string[]): [string, string][] {
  const first = lines.findIndex(isSection);
  // Only lines that can name a registry go to ini (a key spelt otherwise would need a \u escape):
  // ini takes seconds over a 3 MB .npmrc, this milliseconds.
  const wanted = (first < 0 ? lines : lines.slice(0, first + 1)).filter((l) => l.includes('registry') || l.includes('\\u'));
  return Object.entries(ini.parse(wanted.join('\n'))).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
}

/** Registry URLs an .npmrc routes packages to: `registry` and `@scope:registry` (hostPath undefined: routes nothing). */
function registryRoutes(settings: readonly [string, string][], lookup: NpmrcInput['lookup'], expands: boolean, isSecret: NpmrcInput['isSecret']): RegistryRoute[] {
  return settings.flatMap(([key, value]): RegistryRoute[] => {
    if (!/^(?:@[^:\s]+:)?registry$/.test(key)) return [];
    if (!expands && value.includes('${')) return [{ key, url: undefined, hostPath: undefined, ignored: true }];
    assertNoSecretInAddress(value, key, '.npmrc', isSecret);
    const url = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => lookup(name) ?? '');
    let hostPath: string | undefined;
    try {
      hostPath = parseRegistry(url).hostPath;
    } catch {
      hostPath = undefined;
    }
    return [{ key, url, hostPath, ignored: false }];
  });
}

/**
 * The .npmrc written when NPM_TOKEN is set (specification, Node rule 9; NOTES): the
 * application's own lines kept, the registry address, and the line
 * `//<host>/:_authToken=<NPM_TOKEN>` for CC_NPM_REGISTRY's host, else the default
 * registry's. The token stays a reference to the variable in the plan; the file is
 * written with mode 0600 when the build starts.
 */
export async function planNpmrc(input: NpmrcInput): Promise<NpmrcPlan> {
  const appLines = (input.appNpmrc ?? '').split(/\r?\n/).filter((l, i, all) => !(l === '' && i === all.length - 1));
  // Only the top-level settings route packages; runplan's lines go before the app's first `[name]` header.
  const routes = registryRoutes(topLevelRegistries(appLines), input.lookup, input.expandsRegistryVariables ?? true, input.isSecret);
  const ignored = routes.filter((r) => r.ignored).length;
  const overridden: OverriddenSource[] = [];
  let scheme: string;
  let hostPath: string;
  let source: string;
  let requested: string | null;
  const explicit = input.ccNpmRegistry?.trim();
  if (explicit) {
    ({ scheme, hostPath } = parseRegistry(explicit, 'CC_NPM_REGISTRY'));
    source = 'env CC_NPM_REGISTRY';
    requested = explicit;
  } else {
    const own = routes.find((r) => r.key === 'registry' && r.hostPath !== undefined);
    ({ scheme, hostPath } = parseRegistry(own?.url ?? (await input.configuredRegistry())));
    source = own ? "the application's .npmrc registry line" : 'the registry npm is configured with on this host';
    requested = null;
  }
  const routed = routes.some((r) => r.hostPath === hostPath);
  const tokenKey = `//${hostPath}/:_authToken`;
  // A line setting that key alone, however written (spaces around "=", quoted): npm would read the app's token there.
  const isTokenLine = (l: string) => {
    if (!l.includes('authToken') && !l.includes('\\u')) return false;
    const keys = Object.keys(ini.parse(l));
    return keys.length === 1 && keys[0] === tokenKey;
  };
  const kept = appLines.filter((l) => {
    if (isTokenLine(l)) {
      overridden.push({ source: '.npmrc', value: null, reason: `its own auth token line for ${hostPath} is replaced by NPM_TOKEN` });
      return false;
    }
    return true;
  });
  const section = kept.findIndex(isSection);
  const [head, tail] = section < 0 ? [kept, []] : [kept.slice(0, section), kept.slice(section)];
  const text = [...head, ...(routed ? [] : [`registry=${scheme}://${hostPath}/`])].map((l) => `${l}\n`).join('');
  const reasonParts = [
    `NPM_TOKEN is set: .npmrc gets the auth token line for ${hostPath}`,
    explicit ? 'CC_NPM_REGISTRY names the host' : 'CC_NPM_REGISTRY is unset, so the default registry is used',
    ...(ignored > 0 ? [`pnpm ignores the application's ${ignored} registry line(s) written with \${…} (write the address itself there), so they route nothing`] : []),
    routed ? "the application's .npmrc already routes packages to it" : `registry=${scheme}://${hostPath}/ is added`,
    appLines.length > 0 ? `the application's ${appLines.length} .npmrc line(s) are kept` : 'the application has no .npmrc of its own',
  ];
  return {
    tokenHost: hostPath,
    file: {
      path: '.npmrc',
      phase: 'build',
      mode: 0o600,
      secret: true,
      // Quoted for npm's ini parser when it must be: a token holding `#` or `;` was cut there.
      content: [{ text: `${text}${tokenKey}=` }, { env: 'NPM_TOKEN', escape: 'npmrc-value' }, { text: ['', ...tail].map((l) => `${l}\n`).join('') }],
      reason: 'NPM_TOKEN is set: the registry address and its auth token line (specification, Node rule 9)',
      ...credentialsAfterBuild('.npmrc', input.appNpmrc, input.lookup('NPM_TOKEN')),
    },
    decision: decide({
      id: 'node.npm-registry',
      subject: 'Private registry',
      requests: [{ source, value: requested }],
      resolved: `${scheme}://${hostPath}/`,
      reason: reasonParts.join('; '),
      lost: overridden,
    }),
  };
}
