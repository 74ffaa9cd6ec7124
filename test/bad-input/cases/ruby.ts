import { type BadInputCase, binary, type CaseRow, type Entry, inArea, json, TERMINAL_ATTACK } from '../corpus.js';

const SIDEKIQ_GEMFILE = "source 'https://rubygems.org'\nruby '3.1.7'\ngem 'puma'\ngem 'rack'\ngem 'sidekiq'\n";
const SIDEKIQ_LOCK =
  'GEM\n  remote: https://rubygems.org/\n  specs:\n    puma (6.4.0)\n    rack (3.0.0)\n    sidekiq (7.0.0)\n\nPLATFORMS\n  ruby\n\nDEPENDENCIES\n  puma\n  rack\n  sidekiq\n\nBUNDLED WITH\n   2.4.0\n';
const sidekiq = (files: Record<string, Entry>) => ({ Gemfile: SIDEKIQ_GEMFILE, 'Gemfile.lock': SIDEKIQ_LOCK, ...files });
const YAML_BOMB =
  'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n';
const HTTP_INVALID = 'RUNPLAN_E_RUBY_HTTP_JSON_INVALID';
const STATIC_INVALID = 'RUNPLAN_E_RUBY_STATIC_SETTING_INVALID';
const gemfile = (body: string) => `source 'https://rubygems.org'\n${body}\ngem 'puma'\ngem 'rack'\n`;

/** Gemfile, lock file, version files, config.ru and Puma's configuration. */
const rubyFiles: CaseRow[] = [
  { id: 'gemfile-missing-lock', files: { 'Gemfile.lock': null }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_LOCKFILE_MISSING' } },
  { id: 'gemfile-gems-rb-without-locked', files: { Gemfile: null, 'gems.rb': gemfile("ruby '3.1.7'") }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_LOCKFILE_MISSING' } },
  { id: 'gemfile-no-config-ru', files: { 'config.ru': null }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_CONFIG_RU_MISSING' } },
  {
    id: 'gemfile-no-puma',
    files: { Gemfile: "source 'https://rubygems.org'\nruby '3.1.7'\ngem 'rack'\n", 'Gemfile.lock': 'GEM\n  specs:\n    rack (3.0.0)\n\nDEPENDENCIES\n  rack\n' },
    expect: { exit: 2, code: 'RUNPLAN_E_RUBY_PUMA_GEM_MISSING' },
  },
  { id: 'gemfile-binary', files: { Gemfile: binary(100_000) }, expect: { exit: 1, code: 'RUNPLAN_E_RUBY_VERSION_UNAVAILABLE' } },
  { id: 'gemfile-empty', files: { Gemfile: '' }, expect: { exit: 1, code: 'RUNPLAN_E_RUBY_VERSION_UNAVAILABLE' } },
  { id: 'gemfile-ruby-garbage', files: { Gemfile: gemfile("ruby 'three point one'") }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_VERSION_INVALID' } },
  { id: 'gemfile-ruby-escapes', files: { Gemfile: gemfile(`ruby '${TERMINAL_ATTACK}'`) }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_VERSION_INVALID' } },
  {
    id: 'gemfile-ruby-huge',
    files: { Gemfile: () => gemfile(`ruby '${'3.'.repeat(200_000)}1'`) },
    expect: { exit: 1, code: 'RUNPLAN_E_RUBY_VERSION_UNAVAILABLE' },
  },
  { id: 'gemfile-ruby-unavailable', files: { Gemfile: gemfile("ruby '2.7.8'") }, expect: { exit: 1, code: 'RUNPLAN_E_RUBY_VERSION_UNAVAILABLE' } },
  { id: 'gemfile-ruby-file-missing', files: { Gemfile: gemfile("ruby file: '.ruby-version'") }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_VERSION_INVALID' } },
  {
    id: 'gemfile-ruby-file-escapes-app',
    files: { Gemfile: gemfile("ruby file: '../../../../etc/passwd'") },
    expect: { exit: 2, code: 'RUNPLAN_E_APP_PATH_OUTSIDE' },
  },
  { id: 'gemfile-ruby-file-absolute', files: { Gemfile: gemfile("ruby file: '{sentinel}/host-file'") }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_VERSION_INVALID' } },
  { id: 'ruby-version-file-garbage', files: { Gemfile: gemfile("ruby file: '.ruby-version'"), '.ruby-version': 'not-a-version\n' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_VERSION_INVALID' } },
  {
    id: 'ruby-version-file-binary',
    files: { Gemfile: gemfile("ruby file: '.ruby-version'"), '.ruby-version': binary(5_000_000) },
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FILE_TOO_LARGE' },
  },
  { id: 'ruby-version-file-escapes', files: { Gemfile: gemfile("ruby file: '.ruby-version'"), '.ruby-version': `${TERMINAL_ATTACK}\n` }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_VERSION_INVALID' } },
  { id: 'ruby-version-file-conflict', files: { '.ruby-version': '3.0.4\n' }, expect: { exit: 0, code: 'RUNPLAN_W_RUBY_VERSION_FILE_IGNORED' } },
  { id: 'ruby-version-file-ignored-garbage', files: { '.ruby-version': binary(3000) }, expect: { exit: 0, code: 'RUNPLAN_W_RUBY_VERSION_FILE_IGNORED' } },
  {
    id: 'ruby-version-file-directory',
    files: { Gemfile: gemfile("ruby file: '.ruby-version'"), '.ruby-version': { dir: true } },
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FILE_NOT_REGULAR' },
  },
  { id: 'lockfile-binary', files: { 'Gemfile.lock': binary(50_000) }, expect: { exit: 0 } },
  {
    id: 'lockfile-ruby-version-garbage',
    files: { 'Gemfile.lock': `${'GEM\n  specs:\n    puma (6.4.0)\n    rack (3.0.0)\n\nDEPENDENCIES\n  puma\n  rack\n'}\nRUBY VERSION\n   ruby ${TERMINAL_ATTACK}\n` },
    expect: { exit: 0 },
  },
  { id: 'puma-rb-binary', files: { 'config/puma.rb': binary(20_000) }, expect: { exit: 0 } },
  { id: 'puma-rb-huge-numbers', files: { 'config/puma.rb': 'workers 99999999999999999999\nthreads -5, 1e309\n' }, expect: { exit: 0 } },
  { id: 'puma-rb-directory', files: { 'config/puma.rb': { dir: true } }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FILE_NOT_REGULAR' } },
  {
    id: 'secret-yml-without-key',
    files: { 'config/secret.yml': 'production:\n  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>\n' },
    expect: { exit: 0, code: 'RUNPLAN_W_RUBY_SECRET_KEY_BASE_MISSING' },
  },
  { id: 'secret-yml-binary', files: { 'config/secret.yml': binary(10_000) }, expect: { exit: 0 } },
];

/** platform/http.json: every field of the wrong type, injections, and files it names. */
const httpJson: CaseRow[] = [
  { id: 'http-json-not-json', files: { 'platform/http.json': '{force_https: true' }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-array', files: { 'platform/http.json': '[]' }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-binary', files: { 'platform/http.json': binary(30_000) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-unknown-field', files: { 'platform/http.json': json({ gzip: true }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-force-https-string', files: { 'platform/http.json': json({ force_https: 'yes' }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-aliases-array', files: { 'platform/http.json': json({ aliases: ['/a'] }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-alias-injection', files: { 'platform/http.json': json({ aliases: { '/a': '/b; return 200 pwned' } }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-alias-newline', files: { 'platform/http.json': json({ aliases: { '/a\n}': '/b' } }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-alias-escapes', files: { 'platform/http.json': json({ aliases: { '/a': `/${TERMINAL_ATTACK}` } }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-error-pages-status', files: { 'platform/http.json': json({ error_pages: { 200: 'ok.html' } }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-error-page-missing', files: { 'platform/http.json': json({ error_pages: { 404: 'missing.html' } }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-error-page-climbs-out', files: { 'platform/http.json': json({ error_pages: { 404: '../../../../etc/passwd' } }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-error-page-directory', files: { 'platform/http.json': json({ error_pages: { 404: 'public' } }), public: { dir: { 'a.html': 'a' } } }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-charset-object', files: { 'platform/http.json': json({ charset: { utf8: true } }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-charset-injection', files: { 'platform/http.json': json({ charset: 'utf-8; include /etc/nginx' }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-languages-number', files: { 'platform/http.json': json({ languages: 5 }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-language-rewrite-injection', files: { 'platform/http.json': json({ languages: { fr: { rewrite: '/fr$request_uri' } } }) }, expect: { exit: 2, code: HTTP_INVALID } },
  { id: 'http-json-deep', files: { 'platform/http.json': () => `{"aliases": ${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}` }, expect: { exit: 2, code: HTTP_INVALID } },
  {
    id: 'http-json-directory',
    files: { 'platform/http.json': { dir: true } },
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FILE_NOT_REGULAR' },
  },
];

/** The variables the Ruby buildpack reads. */
const rubyVariables: CaseRow[] = [
  { id: 'cc-ruby-version-garbage', env: { CC_RUBY_VERSION: 'ruby-3' }, files: { Gemfile: gemfile('') }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_VERSION_INVALID' } },
  { id: 'cc-ruby-version-escapes', env: { CC_RUBY_VERSION: TERMINAL_ATTACK }, files: { Gemfile: gemfile('') }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_VERSION_INVALID' } },
  { id: 'cc-ruby-version-huge', env: { CC_RUBY_VERSION: '3'.repeat(100_000) }, files: { Gemfile: gemfile('') }, expect: { exit: 1, code: 'RUNPLAN_E_RUBY_VERSION_UNAVAILABLE' } },
  { id: 'cc-ruby-version-unavailable', env: { CC_RUBY_VERSION: '2.6' }, files: { Gemfile: gemfile('') }, expect: { exit: 1, code: 'RUNPLAN_E_RUBY_VERSION_UNAVAILABLE' } },
  { id: 'cc-rakegoals-option', env: { CC_RAKEGOALS: '--rakefile=/tmp/evil' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_RAKEGOALS_INVALID' } },
  { id: 'cc-rakegoals-whitespace', env: { CC_RAKEGOALS: 'db:migrate; rm -rf /' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_RAKEGOALS_INVALID' } },
  { id: 'cc-rakegoals-commas-only', env: { CC_RAKEGOALS: ',,,' }, expect: { exit: 0 } },
  { id: 'cc-rakegoals-escapes', env: { CC_RAKEGOALS: TERMINAL_ATTACK }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_RAKEGOALS_INVALID' } },
  { id: 'cc-rackup-server-other', env: { CC_RACKUP_SERVER: 'unicorn' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_RACKUP_SERVER_INVALID' } },
  { id: 'cc-rackup-server-escapes', env: { CC_RACKUP_SERVER: TERMINAL_ATTACK }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_RACKUP_SERVER_INVALID' } },
  { id: 'cc-puma-workers-garbage', env: { CC_PUMA_WORKERS: 'many' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_PUMA_SETTING_INVALID' } },
  { id: 'cc-puma-workers-negative', env: { CC_PUMA_WORKERS: '-1' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_PUMA_SETTING_INVALID' } },
  { id: 'cc-puma-workers-huge', env: { CC_PUMA_WORKERS: '1'.repeat(400) }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_PUMA_SETTING_INVALID' } },
  { id: 'cc-puma-threads-garbage', env: { CC_PUMA_THREADS: '5;6' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_PUMA_SETTING_INVALID' } },
  { id: 'rails-max-threads-garbage', env: { RAILS_MAX_THREADS: 'x' }, expect: { exit: 0 } },
  { id: 'rails-min-over-max', env: { RAILS_MIN_THREADS: '9', RAILS_MAX_THREADS: '2' }, expect: { exit: 0 } },
  { id: 'ruby-env-escapes', env: { RUBY_ENV: TERMINAL_ATTACK }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_ENV_INVALID' } },
  { id: 'nginx-read-timeout-garbage', env: { NGINX_READ_TIMEOUT: 'forever' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_NGINX_SETTING_INVALID' } },
  { id: 'nginx-read-timeout-zero', env: { NGINX_READ_TIMEOUT: '0' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_NGINX_SETTING_INVALID' } },
  { id: 'nginx-read-timeout-injection', env: { NGINX_READ_TIMEOUT: '30; include /etc/shadow' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_NGINX_SETTING_INVALID' } },
  { id: 'nginx-read-timeout-huge', env: { NGINX_READ_TIMEOUT: '9'.repeat(500) }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_NGINX_SETTING_INVALID' } },
  { id: 'static-path-without-prefix', env: { STATIC_FILES_PATH: '/public/' }, files: { 'public/a.txt': 'a' }, expect: { exit: 2, code: STATIC_INVALID } },
  { id: 'static-prefix-without-path', env: { STATIC_URL_PREFIX: '/s/' }, expect: { exit: 2, code: STATIC_INVALID } },
  { id: 'static-path-climbs-out', env: { STATIC_FILES_PATH: '/../../../etc/', STATIC_URL_PREFIX: '/s/' }, expect: { exit: 2, code: STATIC_INVALID } },
  { id: 'static-path-app-root', env: { STATIC_FILES_PATH: '/', STATIC_URL_PREFIX: '/s/' }, expect: { exit: 2, code: STATIC_INVALID } },
  { id: 'static-path-hidden', env: { STATIC_FILES_PATH: '/.git/', STATIC_URL_PREFIX: '/s/' }, files: { '.git/config': '[core]' }, expect: { exit: 2, code: STATIC_INVALID } },
  { id: 'static-path-missing', env: { STATIC_FILES_PATH: '/nothing/', STATIC_URL_PREFIX: '/s/' }, expect: { exit: 2, code: STATIC_INVALID } },
  { id: 'static-path-is-file', env: { STATIC_FILES_PATH: '/config.ru', STATIC_URL_PREFIX: '/s/' }, expect: { exit: 2, code: STATIC_INVALID } },
  { id: 'static-path-injection', env: { STATIC_FILES_PATH: '/public/;}', STATIC_URL_PREFIX: '/s/' }, files: { 'public/a.txt': 'a' }, expect: { exit: 2, code: STATIC_INVALID } },
  { id: 'static-prefix-root', env: { STATIC_FILES_PATH: '/public/', STATIC_URL_PREFIX: '/' }, files: { 'public/a.txt': 'a' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_STATIC_PREFIX_ROOT' } },
  {
    id: 'static-prefix-injection',
    env: { STATIC_FILES_PATH: '/public/', STATIC_URL_PREFIX: '/s/ { return 200; } location /x' },
    files: { 'public/a.txt': 'a' },
    expect: { exit: 2, code: STATIC_INVALID },
  },
  { id: 'basic-auth-no-colon', env: { CC_HTTP_BASIC_AUTH: 'corpus_nocolon_pw_1e' }, secrets: ['corpus_nocolon_pw_1e'], expect: { exit: 2, code: 'RUNPLAN_E_RUBY_BASIC_AUTH_INVALID' } },
  { id: 'basic-auth-colon-in-password', env: { CC_HTTP_BASIC_AUTH: 'u:corpus_pw_part:two_7c' }, secrets: ['corpus_pw_part'], expect: { exit: 2, code: 'RUNPLAN_E_RUBY_BASIC_AUTH_INVALID' } },
  { id: 'basic-auth-empty-password', env: { CC_HTTP_BASIC_AUTH: 'user:' }, expect: { exit: 2, code: 'RUNPLAN_E_RUBY_BASIC_AUTH_INVALID' } },
  {
    id: 'basic-auth-newline',
    outside: { 'a.env': 'CC_HTTP_BASIC_AUTH="u:corpus_nl_pw_3f\nroot:{PLAIN}x"\n' },
    args: ['--app-env-file', '{case}/a.env'],
    secrets: ['corpus_nl_pw_3f'],
    expect: { exit: 2, code: 'RUNPLAN_E_RUBY_BASIC_AUTH_INVALID' },
  },
  { id: 'basic-auth-unknown-suffix', env: { CC_HTTP_BASIC_AUTH_abc: 'u:corpus_suffix_pw_0d' }, secrets: ['corpus_suffix_pw_0d'], expect: { exit: 2, code: 'RUNPLAN_E_RUBY_BASIC_AUTH_NAME_INVALID' } },
  { id: 'basic-auth-huge-password', env: { CC_HTTP_BASIC_AUTH: `u:${'corpus_big_pw_'.repeat(8000)}` }, secrets: ['corpus_big_pw_'], expect: { exit: 0 } },
  {
    id: 'basic-auth-escapes-in-login',
    env: { CC_HTTP_BASIC_AUTH: `${TERMINAL_ATTACK}:corpus_esc_pw_5b` },
    secrets: ['corpus_esc_pw_5b'],
    expect: { exit: 2, code: 'RUNPLAN_E_RUBY_BASIC_AUTH_INVALID' },
  },
  { id: 'sidekiq-files-missing', env: { CC_SIDEKIQ_FILES: 'config/none.yml' }, files: sidekiq({}), expect: { exit: 2, code: 'RUNPLAN_E_RUBY_SIDEKIQ_FILE_MISSING' } },
  { id: 'sidekiq-files-commas-only', env: { CC_SIDEKIQ_FILES: ',,, ,' }, files: sidekiq({}), expect: { exit: 0, code: 'RUNPLAN_W_RUBY_SIDEKIQ_FILES_EMPTY' } },
  {
    id: 'sidekiq-files-without-gem',
    env: { CC_SIDEKIQ_FILES: 'config/sidekiq.yml' },
    files: { 'config/sidekiq.yml': ':queues:\n  - default\n' },
    expect: { exit: 2, code: 'RUNPLAN_E_RUBY_SIDEKIQ_GEM_MISSING' },
  },
  {
    id: 'sidekiq-file-invalid-yaml',
    env: { CC_SIDEKIQ_FILES: 'config/sidekiq.yml' },
    files: sidekiq({ 'config/sidekiq.yml': ':queues: [unclosed\n' }),
    expect: { exit: 2, code: 'RUNPLAN_E_RUBY_SIDEKIQ_FILE_INVALID' },
  },
  {
    id: 'sidekiq-file-binary',
    env: { CC_SIDEKIQ_FILES: 'config/sidekiq.yml' },
    files: sidekiq({ 'config/sidekiq.yml': binary(20_000) }),
    expect: { exit: 2, code: 'RUNPLAN_E_RUBY_SIDEKIQ_FILE_INVALID' },
  },
  {
    id: 'sidekiq-file-alias-bomb',
    env: { CC_SIDEKIQ_FILES: 'config/sidekiq.yml' },
    files: sidekiq({ 'config/sidekiq.yml': YAML_BOMB }),
    expect: { exit: 2, code: 'RUNPLAN_E_RUBY_SIDEKIQ_FILE_INVALID' },
  },
  {
    id: 'sidekiq-file-logfile',
    env: { CC_SIDEKIQ_FILES: 'config/sidekiq.yml' },
    files: sidekiq({ 'config/sidekiq.yml': ':logfile: /etc/passwd\n' }),
    expect: { exit: 0, code: 'RUNPLAN_W_RUBY_SIDEKIQ_LOGFILE_IGNORED' },
  },
  { id: 'sidekiq-file-climbs-out', env: { CC_SIDEKIQ_FILES: '../../../../etc/passwd' }, files: sidekiq({}), expect: { exit: 2, code: 'RUNPLAN_E_RUBY_SIDEKIQ_FILE_MISSING' } },
  {
    id: 'sidekiq-file-directory',
    env: { CC_SIDEKIQ_FILES: 'config' },
    files: sidekiq({ 'config/x.yml': 'a: 1\n' }),
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FILE_NOT_REGULAR' },
  },
  {
    id: 'sidekiq-files-huge-list',
    env: { CC_SIDEKIQ_FILES: Array.from({ length: 5000 }, (_, i) => `c${i}.yml`).join(',') },
    files: sidekiq({}),
    expect: { exit: 2, code: 'RUNPLAN_E_RUBY_SIDEKIQ_FILE_MISSING' },
  },
  { id: 'cc-enable-sidekiq-garbage', env: { CC_ENABLE_SIDEKIQ: TERMINAL_ATTACK }, files: sidekiq({}), expect: { exit: 0 } },
  {
    id: 'ruby-default-series-garbage',
    hostEnv: { RUNPLAN_RUBY_DEFAULT_SERIES: 'abc' },
    files: { Gemfile: gemfile('') },
    expect: { exit: 2, code: 'RUNPLAN_E_HOST_INVALID_SETTING' },
  },
  {
    id: 'ruby-gem-source-garbage',
    hostEnv: { RUNPLAN_RUBY_GEM_SOURCE: 'elsewhere' },
    expect: { exit: 2, code: 'RUNPLAN_E_HOST_INVALID_SETTING' },
  },
];

/** A Procfile the Ruby buildpack does not run, read only to name the variables its lines mean. */
const procfile: CaseRow[] = [
  {
    id: 'ruby-procfile-escapes',
    files: { Procfile: `web: bundle exec unicorn ${TERMINAL_ATTACK}\nworker: bundle exec sidekiq -C ${TERMINAL_ATTACK}\nrelease: bundle exec rake ${TERMINAL_ATTACK}\n` },
    expect: { exit: 0, code: 'RUNPLAN_W_PROCFILE_IGNORED' },
  },
  { id: 'ruby-procfile-sidekiq-file-outside', files: { Procfile: 'worker: bundle exec sidekiq -C ../../../etc/passwd\n' }, expect: { exit: 0, code: 'RUNPLAN_W_PROCFILE_IGNORED' } },
];

export const rubyCases: BadInputCase[] = inArea('ruby', 'ruby', [...rubyFiles, ...httpJson, ...rubyVariables, ...procfile]);
