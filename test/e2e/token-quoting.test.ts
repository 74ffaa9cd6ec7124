import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planNpmrc } from '../../buildpacks/node/npmrc.js';
import { TOOL_PACKAGES } from '../../buildpacks/node/tools.js';
import { planYarnrc } from '../../buildpacks/node/yarnrc.js';
import { ensureTree } from '../../src/building/install/tree-cache.js';
import { assembleEnvironment } from '../../src/env/assemble.js';
import { renderFile } from '../../src/process/materialise-files.js';
import { publishedNodeInventory } from '../helpers/node-inventory.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Issue 21: a token holding "#" or ";" was written into .npmrc unquoted, and npm
 * read it back cut there. Each token below goes through what a build does — the
 * Node buildpack plans the file, the executor renders it (src/process/
 * materialise-files.ts) — and then the tool itself reads it: npm sends it to a
 * registry on 127.0.0.1 that reports the Authorization header it got, and Yarn 4
 * prints the setting it read (`yarn config get --no-redacted`).
 */
const HARD_TOKENS = [
  'npm_Plain0Token_0042+/=',
  'tok#hash#0042',
  'tok;semicolon;0042',
  'tok \\;escaped \\#0042',
  '"quoted-0042"',
  "'single-0042'",
  '[bracket-0042',
  'back\\slash\\0042\\',
  'tab\tinside-0042',
];
/** npm expands ${NAME} in .npmrc values: these must arrive unexpanded. */
const NPM_REFERENCES = ['tok${HOME}0042', 'tok\\${HOME}0042', 'tok\\\\${PATH?}0042', '${X}${Y}'];
/** Yarn reads YAML escapes: quotes, backslashes and control characters must arrive as they were. */
const YARN_TOKENS = ['tok"quote\\backslash-0042', 'bell\u0007del\u007f-0042', 'nel\u0085sep\u2028bom\ufeff-0042'];

const environmentOf = (token: string) => assembleEnvironment({ application: { NPM_TOKEN: token } });

function run(command: string, args: readonly string[], cwd: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, [...args], { cwd, env, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

describe('NPM_TOKEN in .npmrc, read back by npm itself', () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.authorization ?? '');
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  let port = 0;

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => server.close());

  it.each([...HARD_TOKENS, ...NPM_REFERENCES])('sends %j to the registry exactly as given', async (token) => {
    const dir = await tempDir('runplan-npmrc-');
    const planned = await planNpmrc({ ccNpmRegistry: `http://127.0.0.1:${port}`, configuredRegistry: async () => 'https://registry.example.org/', lookup: () => undefined });
    await writeFile(join(dir, '.npmrc'), renderFile(planned.file, environmentOf(token)));
    await mkdir(join(dir, 'home'));
    // Nothing of this machine's npm configuration: the project's .npmrc alone names the registry and the token.
    const env = { PATH: process.env.PATH ?? '', HOME: join(dir, 'home'), npm_config_cache: join(dir, 'cache'), npm_config_update_notifier: 'false' };
    seen.length = 0;
    const pinged = await run('npm', ['ping', '--fetch-retries=0'], dir, env);
    expect(pinged.code, pinged.output).toBe(0);
    expect(seen).toEqual([`Bearer ${token}`]);
  });
});

describe('NPM_TOKEN in .yarnrc.yml, read back by Yarn itself', () => {
  let yarn = '';

  beforeAll(async () => {
    const pinned = TOOL_PACKAGES['yarn-berry'];
    const published = (await publishedNodeInventory()).tools[pinned.package]?.find((v) => v.version === pinned.pinned);
    if (!published) throw new Error(`the registry publishes no ${pinned.package} ${pinned.pinned}`);
    const tree = await ensureTree(inject('sharedCacheDir'), { type: 'npm', name: pinned.package, version: published.version, integrity: published.integrity });
    yarn = join(tree.dir, pinned.bin);
  }, 300_000);

  it.each([...HARD_TOKENS, ...YARN_TOKENS])('reads %j exactly as given', async (token) => {
    const dir = await tempDir('runplan-yarnrc-');
    const planned = await planYarnrc('enableTelemetry: false\n', 'yarn-berry', TOOL_PACKAGES['yarn-berry'].pinned, {
      ccNpmRegistry: 'http://127.0.0.1:9',
      configuredRegistry: async () => 'https://registry.example.org/',
      lookup: () => undefined,
    });
    await writeFile(join(dir, '.yarnrc.yml'), renderFile(planned.file, environmentOf(token)));
    await writeFile(join(dir, 'package.json'), '{"name": "token-quoting"}\n');
    // yarnPath names the release a build installs: the test runs the release itself instead.
    const env = { PATH: process.env.PATH ?? '', HOME: join(dir, 'home'), YARN_IGNORE_PATH: '1', YARN_ENABLE_TELEMETRY: '0' };
    const read = await run(process.execPath, [yarn, 'config', 'get', 'npmRegistries', '--json', '--no-redacted'], dir, env);
    expect(read.code, read.output).toBe(0);
    expect(JSON.parse(read.output)).toMatchObject({ '//127.0.0.1:9': { npmAlwaysAuth: true, npmAuthToken: token } });
  });
});
