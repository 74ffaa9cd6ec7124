/**
 * Properties of the nginx configuration the Ruby buildpack generates (issue 11):
 * for any settings the resolvers accept (static files, read timeout, basic auth,
 * platform/http.json), the configuration passes the real `nginx -t`, run as the
 * plan's nginx-check step runs it (`-p <app>/ -c <app>/.runplan/nginx/nginx.conf`),
 * and holds exactly the directives those settings ask for — no other directive,
 * no extra map entry.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseHttpJson, type HttpSettings } from '../../buildpacks/ruby/http-json.js';
import { NGINX_CONF, renderNginxConfig, type NginxConfigInput } from '../../buildpacks/ruby/nginx-config.js';
import { resolveBasicAuth } from '../../buildpacks/ruby/resolve-basic-auth.js';
import { DEFAULT_CLIENT_MAX_BODY_SIZE, resolveClientMaxBodySize } from '../../buildpacks/ruby/resolve-body-size.js';
import { resolveReadTimeout } from '../../buildpacks/ruby/resolve-read-timeout.js';
import { resolveStaticFiles } from '../../buildpacks/ruby/resolve-static-files.js';
import { tempDir } from '../helpers/temp.js';
import { codedOr, codedOrAsync, RUNS } from './arbitraries.js';

/** One statement of an nginx configuration: its name, arguments as written, and its block. */
interface Statement {
  readonly name: string;
  readonly args: readonly string[];
  readonly block?: readonly Statement[];
}

/**
 * Reads a configuration into statements, with nginx's own token rules
 * (ngx_conf_read_token): words end at whitespace, ";" or "{"; quotes only at the
 * start of a word; a backslash takes the next character; "#" at the start of a
 * word comments out the rest of the line.
 */
function parseNginx(text: string): Statement[] {
  let i = 0;
  const word = (): string => {
    const q = text[i];
    let out = '';
    if (q === '"' || q === "'") {
      i++;
      while (i < text.length && text[i] !== q) {
        if (text[i] === '\\') out += text[i++];
        out += text[i++];
      }
      if (text[i] !== q) throw new Error('unterminated quote');
      i++;
      return out;
    }
    while (i < text.length && !/[\s;{]/.test(text[i] as string)) {
      if (text[i] === '\\') out += text[i++];
      out += text[i++];
    }
    return out;
  };
  const block = (top: boolean): Statement[] => {
    const out: Statement[] = [];
    let tokens: string[] = [];
    for (;;) {
      while (i < text.length && /\s/.test(text[i] as string)) i++;
      if (i >= text.length) {
        if (!top || tokens.length > 0) throw new Error('unexpected end of configuration');
        return out;
      }
      const c = text[i];
      if (c === '#' && tokens.length >= 0 && (i === 0 || /[\s;{}]/.test(text[i - 1] as string))) {
        while (i < text.length && text[i] !== '\n') i++;
      } else if (c === ';') {
        i++;
        if (tokens.length === 0) throw new Error('empty statement');
        out.push({ name: tokens[0] as string, args: tokens.slice(1) });
        tokens = [];
      } else if (c === '{') {
        i++;
        if (tokens.length === 0) throw new Error('block without a name');
        out.push({ name: tokens[0] as string, args: tokens.slice(1), block: block(false) });
        tokens = [];
      } else if (c === '}') {
        i++;
        if (top || tokens.length > 0) throw new Error('unexpected "}"');
        return out;
      } else {
        tokens.push(word());
      }
    }
  };
  return block(true);
}

/** Directive names by count; the entries of `types` and `map` blocks are data, counted apart as map entries. */
function census(statements: readonly Statement[], counts = new Map<string, number>()): Map<string, number> {
  for (const s of statements) {
    counts.set(s.name, (counts.get(s.name) ?? 0) + 1);
    if (s.name === 'map') counts.set('(map entries)', (counts.get('(map entries)') ?? 0) + (s.block?.length ?? 0));
    else if (s.name !== 'types' && s.block) census(s.block, counts);
  }
  return counts;
}

/** What the settings ask for, directive by directive. */
function expectedCensus(input: NginxConfigInput): Map<string, number> {
  const http = input.http;
  const aliases = http.aliases?.length ?? 0;
  const pages = http.errorPages?.length ?? 0;
  const languages = http.languages;
  const prefixes = languages ? new Set([languages.default, ...languages.codes.map((c) => c.prefix)].filter((p) => p !== undefined && p !== '')).size : 0;
  const n = (condition: boolean | undefined, count = 1) => (condition ? count : 0);
  const counts: Record<string, number> = {
    user: n(input.user !== undefined),
    worker_processes: 1,
    daemon: 1,
    pid: 1,
    error_log: 1,
    events: 1,
    worker_connections: 1,
    http: 1,
    types: 1,
    default_type: 1,
    access_log: 1,
    client_body_temp_path: 1,
    client_max_body_size: 1,
    proxy_temp_path: 1,
    fastcgi_temp_path: 1,
    uwsgi_temp_path: 1,
    scgi_temp_path: 1,
    sendfile: 1,
    server_tokens: 1,
    upstream: 1,
    server: 2, // the server block and the upstream's server
    map: 1 + n(http.forceHttps) + n(languages !== undefined, 4),
    '(map entries)': 2 + n(http.forceHttps, 2) + (languages ? 2 + (1 + languages.codes.length) + (1 + prefixes) + 2 : 0),
    listen: 1,
    absolute_redirect: 1,
    charset: n(http.charset !== undefined),
    auth_basic: n(input.basicAuth),
    auth_basic_user_file: n(input.basicAuth),
    if: n(http.forceHttps) + n(languages !== undefined),
    return: n(http.forceHttps) + aliases + n(input.staticFiles !== undefined),
    location: 1 + aliases + n(input.staticFiles !== undefined, 2) + pages,
    alias: n(input.staticFiles !== undefined) + pages,
    proxy_intercept_errors: n(pages > 0),
    error_page: pages,
    // Served files never through a symlink (issue 11, finding 3): where static files and error pages are served.
    disable_symlinks: n(input.staticFiles !== undefined) + pages,
    internal: pages,
    rewrite: n(languages !== undefined),
    proxy_pass: 1,
    proxy_set_header: 3,
    proxy_redirect: 1,
    proxy_read_timeout: 1,
  };
  return new Map(Object.entries(counts).filter(([, v]) => v > 0));
}

// Values from the characters each setting allows, so that most pass their resolver and reach nginx.
const chars = (set: string, min: number, max: number) => fc.string({ unit: fc.constantFrom(...set), minLength: min, maxLength: max });
const URL_CHARS = 'abcXYZ019._~-%/';
const urlPath = fc.tuple(chars(URL_CHARS, 1, 12), fc.constantFrom('', '%2F', '%41')).map(([p, e]) => `/${p}${e}`);
const target = fc.oneof(
  fc.tuple(urlPath, chars('?=&+,@!*:ab1', 0, 6)).map(([p, q]) => p + q),
  fc.tuple(fc.constantFrom('http', 'https'), chars('abc.-1', 1, 10), fc.option(fc.integer({ min: 1, max: 65535 })), urlPath).map(([s, h, port, p]) => `${s}://x${h}${port ? `:${port}` : ''}${p}`),
);
const relativeFile = fc.tuple(chars('abcXY019._-/', 1, 12), fc.constantFrom('.html', '.htm', '', '.json')).map(([p, e]) => `/${p}${e}`);
const language = fc.tuple(chars('abcdefz', 2, 3), fc.option(chars('abc019', 2, 8))).map(([l, r]) => (r ? `${l}-${r}` : l));

const bodySize = fc.tuple(fc.integer({ min: 0, max: 999_999 }), fc.constantFrom('', 'k', 'K', 'm', 'M', 'g')).map(([n, unit]) => `${n}${unit}`);

const rawHttpJson = fc.record(
  {
    force_https: fc.boolean(),
    charset: fc.constantFrom('utf-8', 'UTF8', 'latin1', 'iso-8859-15', 'windows-1251', 'koi8-r', 'shift_jis', 'big5'),
    aliases: fc.dictionary(urlPath, target, { maxKeys: 4 }),
    error_pages: fc.dictionary(fc.integer({ min: 400, max: 599 }).map(String), relativeFile, { maxKeys: 3 }),
    languages: fc.dictionary(fc.oneof(fc.constant('default'), language), fc.record({ rewrite: fc.oneof(urlPath, fc.constant('/')) }), { maxKeys: 4 }),
    client_max_body_size: bodySize,
  },
  { requiredKeys: [] },
);

const settings = fc.record({
  port: fc.integer({ min: 1, max: 65535 }),
  workerProcesses: fc.integer({ min: 1, max: 4 }),
  readTimeout: fc.option(
    fc.integer({ min: 1, max: 86_400 }).map((n) => (n % 2 ? `${n}` : `${n}s`)),
    { nil: undefined },
  ),
  staticPath: fc.option(chars('abcXY019._-/', 1, 12), { nil: undefined }),
  staticPrefix: fc.option(urlPath, { nil: undefined }),
  basicAuth: fc.option(
    fc.tuple(chars('abc019', 1, 6), chars('abc019!@%^&*()[]<>?', 1, 10)).map(([u, p]) => `${u}:${p}`),
    { nil: undefined },
  ),
  bodySize: fc.option(bodySize, { nil: undefined }),
  http: rawHttpJson,
});

describe('generated nginx configuration', () => {
  let root: string;
  beforeAll(async () => {
    // A space in the directory, as in the unit test: paths are written quoted.
    root = join(await tempDir(), 'app root');
    mkdirSync(join(root, '.runplan', 'nginx'), { recursive: true });
  });

  it('passes nginx -t and holds only the directives the settings ask for', async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(settings, async (s) => {
        // Each setting goes through its resolver as planning does; one a resolver refuses (with a code) is left out.
        const timeout = codedOr(() => resolveReadTimeout(s.readTimeout))?.seconds ?? 300;
        const staticFiles = (await codedOrAsync(() => resolveStaticFiles(s.staticPath, s.staticPrefix, async () => true)))?.settings;
        const auth = s.basicAuth === undefined ? undefined : codedOr(() => resolveBasicAuth([['CC_HTTP_BASIC_AUTH', s.basicAuth as string]]));
        const http: HttpSettings = (await codedOrAsync(() => parseHttpJson(JSON.stringify(s.http), async () => true))) ?? {};
        const bodyLimit = codedOr(() => resolveClientMaxBodySize(s.bodySize, http.clientMaxBodySize))?.size ?? DEFAULT_CLIENT_MAX_BODY_SIZE;
        const input: NginxConfigInput = {
          appRoot: root,
          port: s.port,
          upstreamSocket: join(root, 'run', 'puma.sock'),
          workerProcesses: s.workerProcesses,
          readTimeoutS: timeout,
          clientMaxBodySize: bodyLimit,
          staticFiles,
          basicAuth: auth !== undefined,
          http,
        };
        const conf = renderNginxConfig(input);
        writeFileSync(join(root, NGINX_CONF), conf);
        try {
          execFileSync('nginx', ['-t', '-q', '-e', 'stderr', '-p', `${root}/`, '-c', join(root, NGINX_CONF)], { stdio: 'pipe' });
        } catch (error) {
          throw new Error(`nginx -t refused the configuration: ${(error as { stderr?: Buffer }).stderr?.toString()}\n${conf}`);
        }
        checked++;
        const statements = parseNginx(conf);
        expect(Object.fromEntries(census(statements))).toEqual(Object.fromEntries(expectedCensus(input)));
        const server = statements.find((t) => t.name === 'http')?.block?.find((t) => t.name === 'server');
        expect(server?.block?.find((t) => t.name === 'listen')?.args).toEqual([String(s.port)]);
        expect(server?.block?.find((t) => t.name === 'location' && t.args[0] === '/')?.block?.find((t) => t.name === 'proxy_read_timeout')?.args).toEqual([`${timeout}s`]);
        // Every path nginx serves from is inside the application.
        const aliases: string[] = [];
        const walk = (list: readonly Statement[]) => {
          for (const t of list) {
            if (t.name === 'alias') aliases.push(...t.args);
            if (t.block) walk(t.block);
          }
        };
        walk(statements);
        for (const a of aliases) expect(a.startsWith(`${root}/`) && !a.split('/').includes('..')).toBe(true);
      }),
      { numRuns: RUNS.nginx },
    );
    // The property is about configurations nginx has read: most runs must get there.
    expect(checked).toBe(RUNS.nginx);
  });

  it('the statement reader finds an injected directive', () => {
    const census1 = census(parseNginx('http { server { location = "/a" { return 301 "/b"; } } }'));
    const census2 = census(parseNginx('http { server { location = "/a" { return 301 "/b"; } include /etc/passwd; } }'));
    expect(census2.get('include')).toBe(1);
    expect(census1.get('include')).toBeUndefined();
    expect(census(parseNginx('map $a $b { default 0; "x;y" 1; } # c { d; }'))).toEqual(
      new Map([
        ['map', 1],
        ['(map entries)', 2],
      ]),
    );
  });
});
