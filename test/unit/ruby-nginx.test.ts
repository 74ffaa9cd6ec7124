import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RubyErrors } from '../../buildpacks/ruby/errors.js';
import { charsetName, parseHttpJson } from '../../buildpacks/ruby/http-json.js';
import { NGINX_CONF, renderNginxConfig, type NginxConfigInput } from '../../buildpacks/ruby/nginx-config.js';
import { appRelativePath, isSafeRedirectTarget, isSafeUrlPath } from '../../buildpacks/ruby/nginx-values.js';
import { resolveBasicAuth } from '../../buildpacks/ruby/resolve-basic-auth.js';
import { resolveStaticFiles } from '../../buildpacks/ruby/resolve-static-files.js';
import { textChunks } from '../../src/plan/placeholders.js';
import { tempDir } from '../helpers/temp.js';

// What a variable or http.json could hold to end a directive and add its own.
const HOSTILE = ['/x/; return 200 "pwned"', '/x"; include /etc/passwd; #', '/x{', '/a$host', '/a b', '/a\nb', '/a\\b', '/a#b', '/a;b', "/a'b", '/x/../../etc'];

const dirs = async (p: string) => ['public', 'static-files', 'assets/v1'].includes(p);
const exists = async (p: string) => ['errors/404.html', 'errors/500.html'].includes(p);

describe('static files (Ruby rule 7, Errors)', () => {
  it.each([
    ['/public/', '/static/', { prefix: '/static/', directory: 'public' }],
    ['public', 'static', { prefix: '/static/', directory: 'public' }],
    ['/assets/v1', '/a/b/', { prefix: '/a/b/', directory: 'assets/v1' }],
  ])('STATIC_FILES_PATH=%j STATIC_URL_PREFIX=%j', async (path, prefix, settings) => {
    expect((await resolveStaticFiles(path, prefix, dirs)).settings).toEqual(settings);
  });

  it('serves nothing when neither is set', async () => {
    expect((await resolveStaticFiles(undefined, '', dirs)).settings).toBeUndefined();
  });

  it.each(['/', '//', '///'])('fails the deployment on STATIC_URL_PREFIX=%j', async (prefix) => {
    await expect(resolveStaticFiles('/public/', prefix, dirs)).rejects.toMatchObject({ code: RubyErrors.RUBY_STATIC_PREFIX_ROOT.code, variable: 'STATIC_URL_PREFIX' });
    await expect(resolveStaticFiles(undefined, prefix, dirs)).rejects.toMatchObject({ code: RubyErrors.RUBY_STATIC_PREFIX_ROOT.code });
  });

  it.each<[string | undefined, string | undefined, string]>([
    ['/public/', undefined, 'STATIC_URL_PREFIX'],
    [undefined, '/static/', 'STATIC_FILES_PATH'],
    ['/missing/', '/static/', 'STATIC_FILES_PATH'],
    ['/', '/static/', 'STATIC_FILES_PATH'],
    ['/.git/', '/static/', 'STATIC_FILES_PATH'],
    ['../outside', '/static/', 'STATIC_FILES_PATH'],
    ['/public/../..', '/static/', 'STATIC_FILES_PATH'],
    ...HOSTILE.map((h): [string, string, string] => ['/public/', h, 'STATIC_URL_PREFIX']),
    ...HOSTILE.map((h): [string, string, string] => [h, '/static/', 'STATIC_FILES_PATH']),
  ])('refuses STATIC_FILES_PATH=%j STATIC_URL_PREFIX=%j, naming %s', async (path, prefix, variable) => {
    await expect(resolveStaticFiles(path, prefix, dirs)).rejects.toMatchObject({ code: RubyErrors.RUBY_STATIC_SETTING_INVALID.code, variable });
  });
});

describe('basic auth (Authentication)', () => {
  it('takes CC_HTTP_BASIC_AUTH then every CC_HTTP_BASIC_AUTH_<n> by n, as references only', () => {
    const auth = resolveBasicAuth([
      ['CC_HTTP_BASIC_AUTH_10', 'c:3'],
      ['OTHER', 'x:y'],
      ['CC_HTTP_BASIC_AUTH_2', 'b:2'],
      ['CC_HTTP_BASIC_AUTH', 'a:1'],
      ['CC_HTTP_BASIC_AUTH_3', ''],
    ]);
    expect(auth?.variables).toEqual(['CC_HTTP_BASIC_AUTH', 'CC_HTTP_BASIC_AUTH_2', 'CC_HTTP_BASIC_AUTH_10']);
    expect(auth?.userFile.slice(0, 4)).toEqual([
      { env: 'CC_HTTP_BASIC_AUTH', part: 'before-first-colon' },
      { text: ':{PLAIN}' },
      { env: 'CC_HTTP_BASIC_AUTH', part: 'after-first-colon' },
      { text: '\n' },
    ]);
    expect(JSON.stringify(auth)).not.toMatch(/"a:1"|"b:2"/);
    expect(resolveBasicAuth([['PATH', '/usr/bin']])).toBeUndefined();
  });

  it('refuses a suffix the specification does not define rather than serve the app without that user', () => {
    for (const name of ['CC_HTTP_BASIC_AUTH_abc', 'CC_HTTP_BASIC_AUTH_', 'CC_HTTP_BASIC_AUTH_2x']) {
      try {
        resolveBasicAuth([[name, 'alice:s3cret-pw']]);
        expect.unreachable();
      } catch (error) {
        expect(error).toMatchObject({ code: RubyErrors.RUBY_BASIC_AUTH_NAME_INVALID.code, variable: name });
        expect((error as Error).message).not.toContain('s3cret-pw');
      }
    }
  });

  it.each(['alice', ':pw', 'alice:', 'al ice:pw', 'alice:pw\nbob:pw', 'a:b:c', 'alice:p\tw'])('refuses %j without showing it', (value) => {
    try {
      resolveBasicAuth([['CC_HTTP_BASIC_AUTH_1', value]]);
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: RubyErrors.RUBY_BASIC_AUTH_INVALID.code, variable: 'CC_HTTP_BASIC_AUTH_1' });
      expect((error as Error).message).not.toContain(value);
    }
  });
});

describe('platform/http.json', () => {
  it('reads every field into checked nginx settings', async () => {
    const http = await parseHttpJson(
      JSON.stringify({
        force_https: true,
        charset: 'UTF8',
        aliases: { '/old': '/new', '/docs': 'https://docs.example.test/v2?x=1' },
        error_pages: { '404': '/errors/404.html', '500': 'errors/500.html' },
        languages: { default: { rewrite: '/en/' }, fr: { rewrite: '/fr' }, 'pt-br': { rewrite: '/br' } },
        client_max_body_size: '250M',
      }),
      exists,
    );
    expect(http).toEqual({
      forceHttps: true,
      clientMaxBodySize: '250m',
      charset: 'utf-8',
      aliases: [
        { path: '/old', target: '/new' },
        { path: '/docs', target: 'https://docs.example.test/v2?x=1' },
      ],
      errorPages: [
        { status: 404, file: 'errors/404.html' },
        { status: 500, file: 'errors/500.html' },
      ],
      languages: {
        default: '/en',
        codes: [
          { code: 'fr', prefix: '/fr' },
          { code: 'pt-br', prefix: '/br' },
        ],
      },
    });
    expect(await parseHttpJson('{}', exists)).toEqual({});
  });

  it.each([
    ['utf-8', 'utf-8'],
    ['Latin1', 'iso-8859-1'],
    ['ISO-8859-15', 'iso-8859-15'],
    ['cp1251', 'windows-1251'],
    ['klingon', undefined],
  ])('maps charset %j to %j', (value, name) => {
    expect(charsetName(value)).toBe(name);
  });

  it.each<[string, unknown]>([
    ['not JSON', '{"force_https": true,}'],
    ['not an object', [1]],
    ['unknown field', { forcehttps: true }],
    ['force_https as a string', { force_https: 'true' }],
    ['unknown charset', { charset: 'klingon' }],
    ['charset injecting', { charset: 'utf-8; add_header X 1' }],
    ['error page for 200', { error_pages: { '200': '/errors/404.html' } }],
    ['error page status not a number', { error_pages: { '40x': '/errors/404.html' } }],
    ['error page for 499, which nginx refuses (found by a property test)', { error_pages: { '499': '/errors/404.html' } }],
    ['error page outside the app', { error_pages: { '404': '../../etc/passwd' } }],
    ['error page that does not exist', { error_pages: { '404': '/errors/absent.html' } }],
    ['language code injecting', { languages: { 'fr;': { rewrite: '/fr' } } }],
    ['language without rewrite', { languages: { fr: {} } }],
    ['language rewrite with a variable', { languages: { fr: { rewrite: '/fr$uri' } } }],
    ['alias target javascript:', { aliases: { '/a': 'javascript:alert(1)' } }],
    ['alias target with a variable', { aliases: { '/a': 'http://evil.example/$request_uri' } }],
    ['alias to a protocol-relative URL', { aliases: { '/a': '//evil.example/' } }],
    ['alias target not a string', { aliases: { '/a': 3 } }],
    ['client_max_body_size as a number', { client_max_body_size: 1048576 }],
    ['client_max_body_size injecting', { client_max_body_size: '10m; return 200' }],
    ...HOSTILE.flatMap(
      (h): Array<[string, unknown]> => [
        [`alias path ${JSON.stringify(h)}`, { aliases: { [h]: '/b' } }],
        [`alias target ${JSON.stringify(h)}`, { aliases: { '/a': h } }],
        [`error page ${JSON.stringify(h)}`, { error_pages: { '404': h } }],
        [`language rewrite ${JSON.stringify(h)}`, { languages: { default: { rewrite: h } } }],
      ],
    ),
  ])('refuses %s', async (_name, value) => {
    await expect(parseHttpJson(typeof value === 'string' ? value : JSON.stringify(value), exists)).rejects.toMatchObject({ code: RubyErrors.RUBY_HTTP_JSON_INVALID.code, file: 'platform/http.json' });
  });

  it('keeps the validators narrow', () => {
    expect(isSafeUrlPath('/a-b_c.d~/%20x')).toBe(true);
    expect(isSafeRedirectTarget('https://a.example:8443/p?q=1&r=2')).toBe(true);
    expect(appRelativePath('/public/')).toBe('public');
    expect(appRelativePath('./a/./b')).toBe('a/b');
    expect(appRelativePath('a/../../b')).toBeUndefined();
  });
});

describe('nginx configuration', () => {
  const input = (root: string, extra: Partial<NginxConfigInput> = {}): NginxConfigInput => ({
    appRoot: root,
    port: 8080,
    upstreamSocket: '/tmp/runplan-puma-test.sock',
    workerProcesses: 2,
    user: process.getuid?.() === 0 ? 'root' : undefined,
    readTimeoutS: 300,
    clientMaxBodySize: '100m',
    basicAuth: false,
    http: {},
    ...extra,
  });

  it("proxies the web port to Puma's socket with the read timeout", () => {
    const conf = renderNginxConfig(input('/srv/app', { readTimeoutS: 42 }));
    expect(conf).toContain('listen 8080;');
    expect(conf).toContain('upstream app_server { server "unix:/tmp/runplan-puma-test.sock" fail_timeout=0; }');
    expect(conf).toContain('proxy_read_timeout 42s;');
    expect(conf).toContain('client_max_body_size 100m;');
    expect(conf).toContain('daemon off;');
    expect(conf).toContain('pid "/srv/app/.runplan/nginx/nginx.pid";');
    expect(conf).not.toContain('auth_basic');
  });

  it('passes nginx -t with every feature at once, in a directory with a space in its name', async () => {
    const root = join(await tempDir(), 'my app');
    mkdirSync(join(root, '.runplan', 'nginx'), { recursive: true });
    const conf = renderNginxConfig(
      input(root, {
        staticFiles: { prefix: '/static/', directory: 'public' },
        basicAuth: true,
        http: {
          forceHttps: true,
          charset: 'iso-8859-1',
          aliases: [
            { path: '/old', target: '/new' },
            { path: '/docs', target: 'https://docs.example.test/v2?x=1' },
          ],
          errorPages: [
            { status: 404, file: 'errors/404.html' },
            { status: 503, file: 'errors/maintenance.htm' },
          ],
          languages: {
            default: '/en',
            codes: [
              { code: 'fr', prefix: '/fr' },
              { code: 'pt-br', prefix: '/br' },
              { code: 'de', prefix: '' },
            ],
          },
        },
      }),
    );
    writeFileSync(join(root, NGINX_CONF), conf);
    execFileSync('nginx', ['-t', '-q', '-e', 'stderr', '-p', `${root}/`, '-c', join(root, NGINX_CONF)], { stdio: 'pipe' });
    expect(conf).toContain('location = "/old" { return 301 "/new"; }');
    expect(conf).toContain('error_page 503 /__runplan_error_pages/503.htm;');
    expect(conf).toContain('charset "iso-8859-1";');
  });

  it("passes nginx -t with Puma's socket in a directory with a space in its name (TMPDIR; found by a property test)", async () => {
    const root = join(await tempDir(), 'my app');
    mkdirSync(join(root, '.runplan', 'nginx'), { recursive: true });
    writeFileSync(join(root, NGINX_CONF), renderNginxConfig(input(root, { upstreamSocket: join(root, 'run dir', 'puma.sock') })));
    execFileSync('nginx', ['-t', '-q', '-e', 'stderr', '-p', `${root}/`, '-c', join(root, NGINX_CONF)], { stdio: 'pipe' });
  });

  it('refuses a host path nginx could read as a variable', () => {
    expect(() => renderNginxConfig(input('/srv/$app'))).toThrow(/nginx cannot be given the path/);
  });
});

describe('nginx configuration in a plan', () => {
  const input: NginxConfigInput = {
    appRoot: '${APP_HOME}',
    port: 8080,
    upstreamSocket: '${RUN_DIR}/puma.sock',
    workerProcesses: 2,
    readTimeoutS: 300,
    clientMaxBodySize: '100m',
    basicAuth: true,
    http: {},
    staticFiles: { prefix: '/static/', directory: 'public' },
  };

  it("names the application's directory and the run directory by the executor's placeholders", () => {
    const conf = renderNginxConfig(input);
    expect(conf).toContain('pid "${APP_HOME}/.runplan/nginx/nginx.pid";');
    expect(conf).toContain('upstream app_server { server "unix:${RUN_DIR}/puma.sock" fail_timeout=0; }');
    expect(conf).toContain('auth_basic_user_file "${APP_HOME}/.runplan/nginx/users";');
    expect(conf).toContain('alias "${APP_HOME}/public/";');
    // As file chunks: nginx.pid and the five temporary directories, the socket, the users file, the static files and where links are checked from.
    const chunks = textChunks(conf);
    expect(chunks.filter((c) => 'placeholder' in c).map((c) => (c as { placeholder: string }).placeholder)).toEqual([...Array(6).fill('APP_HOME'), 'RUN_DIR', 'APP_HOME', 'APP_HOME', 'APP_HOME']);
    expect(chunks.some((c) => 'text' in c && c.text.includes('${'))).toBe(false);
  });

  it('still refuses "$" anywhere else in a path', () => {
    expect(() => renderNginxConfig({ ...input, appRoot: '${APP_HOME}/$x' })).toThrow(/nginx cannot be given the path/);
    expect(() => renderNginxConfig({ ...input, upstreamSocket: '${HOME}/puma.sock' })).toThrow(/nginx cannot be given the path/);
  });
});
