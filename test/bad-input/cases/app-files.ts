import { type BadInputCase, big, binary, type CaseRow, inArea, json, pkg, pkgRaw } from '../corpus.js';

const OUTSIDE = 'RUNPLAN_E_APP_PATH_OUTSIDE';
const NOT_REGULAR = 'RUNPLAN_E_APP_FILE_NOT_REGULAR';
const TOO_LARGE = 'RUNPLAN_E_APP_FILE_TOO_LARGE';
const HOST_FILE = { link: '{sentinel}/host-file' };
const HOST_DIR = { link: '{sentinel}/host-dir' };

/**
 * Links leading out of the application (to a "host" directory whose content is
 * never shown and never changed), non-regular files and oversized files, for
 * every file planning reads, serves or writes into.
 */
const node: CaseRow[] = [
  { id: 'node-package-json-link-out', files: { 'package.json': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'node-package-json-relative-link-out', files: { 'package.json': { link: '../host/host-file' } }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'node-package-json-link-inside', files: { 'package.json': { link: 'real.json' }, 'real.json': pkg({}) }, expect: { exit: 0 } },
  { id: 'node-package-json-dangling-link', files: { 'package.json': { link: '{case}/nothing' } }, expect: { exit: 2, code: 'RUNPLAN_E_DETECT_NO_MATCH' } },
  { id: 'node-package-json-link-loop', files: { 'package.json': { link: 'package.json' } }, expect: { exit: 2, code: NOT_REGULAR } },
  { id: 'node-package-json-directory', files: { 'package.json': { dir: true } }, expect: { exit: 2, code: NOT_REGULAR } },
  { id: 'node-package-json-fifo', files: { 'package.json': { fifo: true } }, expect: { exit: 2, code: NOT_REGULAR } },
  { id: 'node-package-json-50mb-unterminated', files: { 'package.json': big('{"a":"', 50_000_000) }, expect: { exit: 2, code: TOO_LARGE } },
  { id: 'node-package-json-5mb-valid', files: { 'package.json': () => pkg({ description: 'd'.repeat(5_000_000) }) }, expect: { exit: 2, code: TOO_LARGE } },
  { id: 'node-nvmrc-link-out', files: { '.nvmrc': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'node-nvmrc-fifo', files: { '.nvmrc': { fifo: true } }, expect: { exit: 2, code: NOT_REGULAR } },
  { id: 'node-npmrc-link-out', command: 'plan-json', files: { '.npmrc': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  {
    id: 'node-yarnrc-yml-link-out',
    files: { 'yarn.lock': '', 'package.json': pkg({ packageManager: 'yarn@4.9.2' }), '.yarnrc.yml': HOST_FILE },
    expect: { exit: 2, code: OUTSIDE },
  },
  { id: 'node-gitignore-link-out', files: { '.gitignore': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'node-procfile-link-out', files: { Procfile: HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  {
    id: 'node-framework-server-file-link-out',
    files: { 'package.json': pkg({ devDependencies: { vite: '6' }, dependencies: { express: '5' } }), 'server.js': HOST_FILE },
    expect: { exit: 2, code: OUTSIDE },
  },
  { id: 'node-lockfile-link-out', files: { 'package-lock.json': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'node-lockfile-huge', files: { 'package-lock.json': big('{"a":1}\n', 20_000_000) }, expect: { exit: 0 } },
  { id: 'node-main-absolute', files: { 'package.json': pkgRaw({ main: '/etc/passwd' }) }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'node-main-climbs-out', files: { 'package.json': pkgRaw({ main: '../../etc/passwd' }) }, expect: { exit: 2, code: OUTSIDE } },
  {
    id: 'node-main-link-out-build',
    command: 'build',
    files: { 'package.json': pkgRaw({ main: 'main.js' }), 'main.js': HOST_FILE, 'package-lock.json': null },
    args: ['--step-timeout', '120'],
    expect: { exit: 2, code: OUTSIDE },
  },
  {
    id: 'node-yarn-dir-link-out',
    command: 'build',
    files: { 'yarn.lock': '', 'package.json': pkg({ packageManager: 'yarn@4.9.2' }), '.yarn': { link: '{sentinel}/writable' } },
    expect: { exit: 2, code: OUTSIDE },
  },
  {
    id: 'node-node-modules-link-out',
    command: 'build',
    files: { node_modules: { link: '{sentinel}/writable' } },
    expect: { exit: 2, code: OUTSIDE },
  },
  { id: 'node-runplan-dir-link-out', command: 'build', files: { '.runplan': { link: '{sentinel}/writable' } }, expect: { exit: 0 } },
  { id: 'node-app-root-is-link', command: 'raw', args: ['plan', '{case}/link-to-app', '--inventory', '{inventory}'], outside: { 'link-to-app': { link: '{app}' } }, expect: { exit: 0 } },
];

const ruby: CaseRow[] = [
  { id: 'ruby-gemfile-link-out', base: 'ruby', files: { Gemfile: HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'ruby-gemfile-fifo', base: 'ruby', files: { Gemfile: { fifo: true } }, expect: { exit: 2, code: NOT_REGULAR } },
  { id: 'ruby-lockfile-link-out', base: 'ruby', files: { 'Gemfile.lock': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  {
    id: 'ruby-version-file-link-out',
    base: 'ruby',
    files: { Gemfile: "source 'https://rubygems.org'\nruby file: '.ruby-version'\ngem 'puma'\ngem 'rack'\n", '.ruby-version': HOST_FILE },
    expect: { exit: 2, code: OUTSIDE },
  },
  { id: 'ruby-puma-rb-link-out', base: 'ruby', files: { 'config/puma.rb': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'ruby-http-json-link-out', base: 'ruby', files: { 'platform/http.json': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  {
    id: 'ruby-http-json-huge',
    base: 'ruby',
    files: { 'platform/http.json': () => json({ aliases: Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`/a${i}`, `/b${i}`])) }) },
    expect: { exit: 2, code: TOO_LARGE },
  },
  {
    id: 'ruby-error-page-link-out',
    base: 'ruby',
    files: { 'platform/http.json': json({ error_pages: { 404: 'public/404.html' } }), 'public/404.html': HOST_FILE },
    expect: { exit: 2, code: OUTSIDE },
  },
  {
    id: 'ruby-static-dir-link-out',
    base: 'ruby',
    env: { STATIC_FILES_PATH: '/pub/', STATIC_URL_PREFIX: '/s/' },
    files: { pub: HOST_DIR },
    expect: { exit: 2, code: OUTSIDE },
  },
  {
    id: 'ruby-static-file-link-out-build',
    base: 'ruby',
    command: 'build',
    env: { STATIC_FILES_PATH: '/pub/', STATIC_URL_PREFIX: '/s/' },
    files: { 'pub/ok.txt': 'ok', 'pub/shadow': HOST_FILE },
    expect: { exit: 1, code: 'RUNPLAN_E_BUILD_STEP_FAILED' },
  },
  {
    id: 'ruby-sidekiq-link-out',
    base: 'ruby',
    env: { CC_SIDEKIQ_FILES: 'config/sidekiq.yml' },
    files: { Gemfile: "source 'https://rubygems.org'\nruby '3.1.7'\ngem 'puma'\ngem 'rack'\ngem 'sidekiq'\n", 'config/sidekiq.yml': HOST_FILE },
    expect: { exit: 2, code: OUTSIDE },
  },
  { id: 'ruby-secret-yml-link-out', base: 'ruby', files: { 'config/secret.yml': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'ruby-config-ru-fifo', base: 'ruby', files: { 'config.ru': { fifo: true } }, expect: { exit: 0 } },
];

const play1: CaseRow[] = [
  { id: 'play1-version-file-link-out', base: 'play1', files: { 'platform/play1_version': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'play1-version-file-fifo', base: 'play1', files: { 'platform/play1_version': { fifo: true } }, expect: { exit: 2, code: NOT_REGULAR } },
  { id: 'play1-conf-link-out', base: 'play1', files: { 'conf/application.conf': HOST_FILE }, expect: { exit: 2, code: OUTSIDE } },
  { id: 'play1-conf-dir-link-out', base: 'play1', files: { conf: HOST_DIR }, expect: { exit: 2, code: 'RUNPLAN_E_DETECT_NO_MATCH' } },
  { id: 'play1-conf-huge', base: 'play1', files: { 'conf/application.conf': binary(6_000_000) }, expect: { exit: 2, code: TOO_LARGE } },
];

export const appFilesCases: BadInputCase[] = inArea('app-files', 'node', [...node, ...ruby, ...play1]);
