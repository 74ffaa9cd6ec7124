/**
 * Generated files parse back to exactly the intended keys (issue 11): the
 * `.npmrc` written when NPM_TOKEN is set, read as npm reads it (with the `ini`
 * package), and `.yarnrc.yml`, read with the `yaml` package.
 */
import fc from 'fast-check';
import ini from 'ini';
import { parse as parseYaml, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { assertTokenFitsNpmrc, parseRegistry, planNpmrc } from '../../buildpacks/node/npmrc.js';
import { yarnReleasePath } from '../../buildpacks/node/tools.js';
import { planYarnrc } from '../../buildpacks/node/yarnrc.js';
import { assertTokenFitsYarnrc } from '../../buildpacks/node/yarnrc-registry.js';
import { renderFile } from '../../src/process/materialise-files.js';
import { assembleEnvironment } from '../../src/env/assemble.js';
import { codedOr, codedOrAsync, hostileString, RUNS } from './arbitraries.js';

/** npm's reading of an .npmrc: the `ini` package npm reads it with. */
const readNpmrc = (text: string): Record<string, unknown> => ini.parse(text);

// The application's own .npmrc: settings npm knows, scoped registries, comments and blank lines.
const npmrcLine = fc.oneof(
  fc.constantFrom('save-exact=true', 'fund=false', 'engine-strict = true', '; a comment', '# another', '', '  ', 'audit=false', '[section]'),
  fc.constantFrom('@corp:registry=https://npm.corp.example/', 'registry=https://registry.example.com/', '//registry.example.com/:_authToken=OLD', 'always-auth=true'),
  // Written as ini reads them too: spaces around "=", quoted, with a comment after the value.
  fc.constantFrom(
    'registry = "https://registry.example.com/"',
    '//registry.example.com/:_authToken = OLD',
    'registry=https://npm.example.com:4873/path/ ; ours',
    '@corp:registry = https://npm.corp.example/ # corp',
  ),
  fc.tuple(fc.constantFrom('cache-min', 'loglevel', 'prefer-offline'), fc.constantFrom('1', 'warn', 'x y')).map(([k, v]) => `${k}=${v}`),
);
const registryHost = fc.constantFrom('registry.example.com', 'npm.example.com:4873', 'https://npm.example.com:4873/path/', 'http://verdaccio.local:4873');
// What npm tokens are made of: letters, digits, "_", "-", "+", "/", "=", ".".
const token = fc.string({ unit: fc.constantFrom(...'abcXYZ0189_-+/=.'), minLength: 8, maxLength: 64 });

async function npmrcFor(appLines: readonly string[] | undefined, registry: string | undefined, tokenValue: string) {
  const plan = await planNpmrc({
    ccNpmRegistry: registry,
    configuredRegistry: async () => 'https://registry.example.org/',
    appNpmrc: appLines?.join('\n'),
    lookup: () => undefined,
  });
  const env = assembleEnvironment({ application: { NPM_TOKEN: tokenValue } });
  return { plan, text: renderFile(plan.file, env) };
}

function expectIntended(appLines: readonly string[] | undefined, plan: Awaited<ReturnType<typeof planNpmrc>>, text: string, tokenValue: string) {
  const tokenKey = `//${plan.tokenHost}/:_authToken`;
  const app = readNpmrc((appLines ?? []).join('\n'));
  const read = readNpmrc(text);
  // Exactly the application's keys, the registry and the token line: nothing else, no section swallowing them.
  expect(Object.keys(read).sort()).toEqual([...new Set([...Object.keys(app), 'registry', tokenKey])].sort());
  expect(read[tokenKey]).toBe(tokenValue);
  // The application's own token line for the host goes wherever it was (NPM_TOKEN replaces it).
  const withoutToken = (v: unknown) => (v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== tokenKey)) : v);
  for (const [k, v] of Object.entries(app)) if (k !== tokenKey && k !== 'registry') expect(read[k]).toEqual(withoutToken(v));
  expect(typeof read.registry === 'string' && read.registry.includes(plan.tokenHost.split('/')[0] as string)).toBe(true);
}

describe('.npmrc written for NPM_TOKEN', () => {
  it("holds exactly the application's settings, the registry and the token, as npm reads it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.option(fc.array(npmrcLine, { maxLength: 6 }), { nil: undefined }), fc.option(registryHost, { nil: undefined }), token, async (appLines, registry, tokenValue) => {
        const { plan, text } = await npmrcFor(appLines, registry, tokenValue);
        expectIntended(appLines, plan, text, tokenValue);
      }),
      { numRuns: RUNS.pure },
    );
  });

  // Issue 11, finding 7: NPM_TOKEN holding a line break added lines of its choosing (script-shell=…)
  // to the generated .npmrc; a line break or NUL in a value written into a file is now a coded error.
  describe('with any NPM_TOKEN (finding 7)', () => {
    it('an NPM_TOKEN of any text never adds a key', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(npmrcLine, { maxLength: 4 }),
          // Finding 7's class: a line break or NUL anywhere in the token (other characters npm's
          // ini reader would misread, such as surrounding spaces, are not in real tokens).
          fc.oneof(
            token,
            fc.tuple(token, fc.constantFrom('\n', '\r', '\r\n', '\0'), hostileString).map(([t, brk, h]) => `${t}${brk}${h}`),
          ),
          async (appLines, tokenValue) => {
            const result = await codedOrAsync(async () => npmrcFor(appLines, undefined, tokenValue));
            if (result === undefined) return;
            const tokenKey = `//${result.plan.tokenHost}/:_authToken`;
            const app = readNpmrc(appLines.join('\n'));
            expect(Object.keys(readNpmrc(result.text)).sort()).toEqual([...new Set([...Object.keys(app), 'registry', tokenKey])].sort());
          },
        ),
        { numRuns: RUNS.pure },
      );
    });
  });
});

// Issue 21: a token holding "#" or ";" was written unquoted and read back cut there.
describe('NPM_TOKEN of any text in .npmrc', () => {
  it('is refused by name, or read back by ini, the parser npm reads .npmrc with, as exactly that token', async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(token, hostileString, fc.string({ unit: 'binary', maxLength: 40 }), fc.stringMatching(/^[#;"'\\ =[\]a-z]{1,12}$/)), async (tokenValue) => {
        const refused = codedOr(() => {
          assertTokenFitsNpmrc(tokenValue);
          return false;
        });
        if (refused === undefined) return;
        const { plan, text } = await npmrcFor(undefined, 'registry.example.com', tokenValue);
        const read = readNpmrc(text);
        const tokenKey = `//${plan.tokenHost}/:_authToken`;
        expect(Object.keys(read).sort()).toEqual(['registry', tokenKey].sort());
        // npm itself then trims the value and expands ${NAME} (escaped here): test/e2e/token-quoting.test.ts runs npm.
        if (tokenValue.includes('${') || tokenValue !== tokenValue.trim()) return;
        checked += 1;
        expect(read[tokenKey]).toBe(tokenValue);
      }),
      { numRuns: RUNS.pure },
    );
    expect(checked).toBeGreaterThan(RUNS.pure / 4);
  });
});

describe('.yarnrc.yml for Yarn 2+', () => {
  const value = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.boolean(),
    fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 }),
  );
  const key = fc.oneof(fc.constantFrom('yarnPath', 'nodeLinker', 'enableGlobalCache', 'npmRegistryServer', 'npmScopes', 'enableTelemetry'), fc.string({ minLength: 1, maxLength: 10 }));
  const appSettings = fc.dictionary(key, value, { maxKeys: 5 });

  it("holds the application's settings and runplan's yarnPath and nodeLinker, whatever the application wrote", async () => {
    await fc.assert(
      fc.asyncProperty(appSettings, fc.constantFrom('yarn2', 'yarn-berry') as fc.Arbitrary<'yarn2' | 'yarn-berry'>, fc.constantFrom('block', 'flow', 'crlf'), async (settings, tool, style) => {
        const appText = style === 'flow' ? stringify(settings, { collectionStyle: 'flow' }) : stringify(settings).replace(/\n/g, style === 'crlf' ? '\r\n' : '\n');
        const { file } = await planYarnrc(appText, tool, '4.9.2');
        const read = parseYaml(file.content.map((c) => ('text' in c ? c.text : '')).join('')) as Record<string, unknown>;
        const { yarnPath: _p, nodeLinker: _l, ...kept } = settings;
        expect(read).toEqual({ ...kept, yarnPath: yarnReleasePath(tool), nodeLinker: 'node-modules' });
      }),
      { numRuns: RUNS.pure },
    );
  });

  it('any text gives a file holding both keys once, or a coded refusal', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          hostileString,
          appSettings.map((s) => stringify(s)),
        ),
        async (appText) => {
          const planned = await codedOrAsync(() => planYarnrc(appText, 'yarn-berry', '4.9.2'));
          if (planned === undefined) return;
          const read = parseYaml(planned.file.content.map((c) => ('text' in c ? c.text : '')).join('')) as Record<string, unknown>;
          expect(read).toMatchObject({ yarnPath: yarnReleasePath('yarn-berry'), nodeLinker: 'node-modules' });
        },
      ),
      { numRuns: RUNS.pure },
    );
  });
});

// Issue 12, item 6: NPM_TOKEN for Yarn 2+, which reads .yarnrc.yml and not .npmrc.
describe('.yarnrc.yml with NPM_TOKEN (Yarn 2+)', () => {
  const registryUrl = fc.constantFrom(
    'https://registry.example.com',
    'https://registry.example.com/',
    'http://npm.example.com:4873/path/',
    'https://npm.example.com:4873',
    'http://${CC_NPM_REGISTRY}',
    'https://${CC_NPM_REGISTRY:-registry.example.com}',
    'not a url',
  );
  const registryKey = fc.constantFrom('//registry.example.com', 'https://registry.example.com/', '//npm.example.com:4873', 'http://npm.example.com:4873/path', '//elsewhere.example.org');
  const appRegistrySettings = fc.record(
    {
      npmRegistryServer: registryUrl,
      npmScopes: fc.dictionary(
        fc.constantFrom('corp', 'runplan-private', 'other'),
        fc.record({ npmRegistryServer: registryUrl, npmAuthToken: fc.constant('scope-old'), npmAlwaysAuth: fc.boolean() }, { requiredKeys: ['npmRegistryServer'] }),
        { maxKeys: 2 },
      ),
      npmRegistries: fc.dictionary(registryKey, fc.record({ npmAuthToken: fc.constant('old'), npmAlwaysAuth: fc.boolean() }, { requiredKeys: [] }), { maxKeys: 2 }),
      npmAuthToken: fc.constant('top-old'),
      unsafeHttpWhitelist: fc.array(fc.constantFrom('localhost', 'npm.example.com'), { maxLength: 2 }),
      enableTelemetry: fc.boolean(),
      nodeLinker: fc.constant('pnp'),
    },
    { requiredKeys: [] },
  );
  const ccRegistry = fc.option(fc.constantFrom('registry.example.com', 'npm.example.com:4873', 'http://npm.example.com:4873/path/', 'https://registry.example.com/'), { nil: undefined });
  const variables = fc.option(fc.constantFrom('npm.example.com:4873', 'registry.example.com'), { nil: undefined });
  // Yarn's own spelling rules for what its parser reads: ${NAME} and ${NAME:-fallback} expanded.
  const expand = (value: unknown, cc: string | undefined) =>
    typeof value === 'string' ? value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, n: string, f: string | undefined) => (n === 'CC_NPM_REGISTRY' && cc !== undefined ? cc : (f ?? ''))) : value;
  const hostOf = (value: unknown, cc: string | undefined) => {
    try {
      return parseRegistry(String(expand(value, cc))).hostPath;
    } catch {
      return undefined;
    }
  };
  const normalise = (key: string) => key.replace(/^[a-z]+:/, '').replace(/\/+$/, '');
  interface YarnrcRead {
    npmRegistries: Record<string, unknown>;
    npmScopes: Record<string, unknown>;
    npmRegistryServer?: unknown;
    unsafeHttpWhitelist?: unknown[];
    [key: string]: unknown;
  }

  async function yarnrcWithToken(appText: string, cc: string | undefined, variable: string | undefined, tokenValue: string) {
    const planned = await planYarnrc(appText, 'yarn-berry', '4.9.2', {
      ccNpmRegistry: cc,
      configuredRegistry: async () => 'https://registry.example.org/',
      lookup: (n) => (n === 'CC_NPM_REGISTRY' ? variable : undefined),
    });
    const env = assembleEnvironment({ application: { NPM_TOKEN: tokenValue } });
    return { planned, text: renderFile(planned.file, env) };
  }

  it("holds the token for the registry's host only, and the application's settings, whatever the application wrote", async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(appRegistrySettings, ccRegistry, variables, token, fc.constantFrom('block', 'flow') as fc.Arbitrary<'block' | 'flow'>, async (settings, cc, variable, tokenValue, style) => {
        const appText = stringify(settings, { collectionStyle: style });
        const result = await codedOrAsync(() => yarnrcWithToken(appText, cc, variable, tokenValue));
        if (result === undefined) return;
        checked += 1;
        const { planned, text } = result;
        const read = parseYaml(text) as YarnrcRead;
        const resolved = planned.decision?.resolved ?? '';
        const host = parseRegistry(resolved).hostPath;
        expect(planned.file).toMatchObject({ mode: 0o600, secret: true });
        // The token, for exactly that host, sent always; no other spelling of the host left to compete with it.
        expect(read.npmRegistries[`//${host}`]).toEqual({ npmAlwaysAuth: true, npmAuthToken: tokenValue });
        const others = Object.keys(read.npmRegistries).filter((k) => k !== `//${host}`);
        for (const k of others) expect(normalise(k)).not.toBe(`//${host}`);
        for (const k of others) expect(read.npmRegistries[k]).toEqual(settings.npmRegistries?.[k]);
        // Scoped registries stay as written; a scope routed to the host loses only its own credentials.
        for (const [scope, value] of Object.entries(settings.npmScopes ?? {})) {
          const routed = hostOf(value.npmRegistryServer, variable) === host;
          const { npmAuthToken: _t, ...withoutToken } = value;
          expect(read.npmScopes[scope]).toEqual(routed ? withoutToken : value);
        }
        // The default registry: the application's when it routes to the host already, else the host.
        const routedByApp = hostOf(settings.npmRegistryServer, variable) === host || Object.values(settings.npmScopes ?? {}).some((v) => hostOf(v.npmRegistryServer, variable) === host);
        expect(read.npmRegistryServer).toBe(routedByApp ? settings.npmRegistryServer : resolved.replace(/\/$/, ''));
        if (!routedByApp && resolved.startsWith('http:')) expect(read.unsafeHttpWhitelist).toContain(host.replace(/[:/].*$/, ''));
        // Everything else is the application's, and runplan's yarnPath and nodeLinker.
        const { npmRegistries: _r, npmScopes: _s, npmRegistryServer: _n, unsafeHttpWhitelist: _w, nodeLinker: _l, ...rest } = settings;
        const { npmRegistries: _r2, npmScopes: _s2, npmRegistryServer: _n2, unsafeHttpWhitelist: _w2, yarnPath, nodeLinker, ...readRest } = read;
        expect(readRest).toEqual(rest);
        expect([yarnPath, nodeLinker]).toEqual([yarnReleasePath('yarn-berry'), 'node-modules']);
        if (settings.unsafeHttpWhitelist) for (const h of settings.unsafeHttpWhitelist) expect(read.unsafeHttpWhitelist).toContain(h);
      }),
      { numRuns: RUNS.pure },
    );
    // The refusals (none expected here) must not be what makes the property hold.
    expect(checked).toBeGreaterThan(RUNS.pure / 2);
  });

  it('any application text gives a file with the token for the host once, or a coded refusal', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          hostileString,
          appRegistrySettings.map((s) => stringify(s)),
        ),
        ccRegistry,
        token,
        async (appText, cc, tokenValue) => {
          const result = await codedOrAsync(() => yarnrcWithToken(appText, cc, 'npm.example.com:4873', tokenValue));
          if (result === undefined) return;
          const read = parseYaml(result.text) as YarnrcRead;
          const host = parseRegistry(result.planned.decision?.resolved as string).hostPath;
          expect(read).toMatchObject({ yarnPath: yarnReleasePath('yarn-berry'), nodeLinker: 'node-modules' });
          expect(read.npmRegistries[`//${host}`]).toEqual({ npmAlwaysAuth: true, npmAuthToken: tokenValue });
          expect(result.text.split(tokenValue).length - 1).toBe(1);
        },
      ),
      { numRuns: RUNS.pure },
    );
  });

  it('an NPM_TOKEN of any text is refused by name, or read back by Yarn as exactly that token', async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(token, hostileString, fc.string({ unit: 'binary', maxLength: 40 })), async (tokenValue) => {
        const refused = codedOr(() => {
          assertTokenFitsNpmrc(tokenValue);
          assertTokenFitsYarnrc(tokenValue);
          return false;
        });
        if (refused === undefined) return;
        checked += 1;
        const { text } = await yarnrcWithToken('enableTelemetry: false\n', 'registry.example.com', undefined, tokenValue);
        const read = parseYaml(text) as YarnrcRead;
        expect(Object.keys(read).sort()).toEqual(['enableTelemetry', 'nodeLinker', 'npmRegistries', 'npmRegistryServer', 'yarnPath']);
        expect(read.npmRegistries).toEqual({ '//registry.example.com': { npmAlwaysAuth: true, npmAuthToken: tokenValue } });
        // Yarn would replace ${NAME} in it: none is there.
        expect(tokenValue).not.toContain('${');
      }),
      { numRuns: RUNS.pure },
    );
    expect(checked).toBeGreaterThan(RUNS.pure / 4);
  });
});
