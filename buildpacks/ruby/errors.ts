import { defineErrors, defineWarnings } from '../../src/kit/index.js';

/** The Ruby buildpack's error codes (RUNPLAN_E_RUBY_…). */
export const RubyErrors = defineErrors({
  RUBY_GEMFILE_MISSING: {
    title: 'Neither Gemfile nor gems.rb is present',
    kind: 'input',
    fix: 'Commit a Gemfile (or gems.rb) at the application root that lists gem "puma".',
  },
  RUBY_LOCKFILE_MISSING: {
    title: 'The bundle lock file is not committed',
    kind: 'input',
    fix: 'Run `bundle install` (or `bundle lock`) once and commit Gemfile.lock (gems.locked for gems.rb).',
  },
  RUBY_CONFIG_RU_MISSING: {
    title: 'config.ru is missing',
    kind: 'input',
    fix: 'Commit a Rack configuration file config.ru at the application root (Rails generates one).',
  },
  RUBY_PUMA_GEM_MISSING: {
    title: 'The Gemfile does not include the gem puma',
    kind: 'input',
    fix: 'Add gem "puma" to the Gemfile, run `bundle install`, and commit the Gemfile and its lock file; or set CC_RACKUP_SERVER to the server the Gemfile has.',
  },
  RUBY_RACKUP_SERVER_INVALID: {
    title: 'CC_RACKUP_SERVER is not a server this buildpack can run',
    kind: 'input',
    fix: 'Leave CC_RACKUP_SERVER unset (puma) or set it to the name of a Rack server gem listed in the Gemfile.',
  },
  RUBY_VERSION_INVALID: {
    title: 'The requested Ruby version cannot be read',
    kind: 'input',
    fix: 'Write CC_RUBY_VERSION as 3, 3.3 or 3.3.1; write the Gemfile directive as ruby "3.3.1", ruby "~> 3.3.0", ruby ">= 3.2" or ruby file: ".ruby-version".',
  },
  RUBY_VERSION_UNAVAILABLE: {
    title: 'No available Ruby matches the requested version',
    kind: 'deployment',
    fix: 'Request one of the available versions listed in the message (Gemfile ruby directive or CC_RUBY_VERSION).',
  },
  RUBY_NGINX_MISSING: {
    title: 'nginx is not installed on this host',
    kind: 'deployment',
    fix: 'Install nginx on the host (Debian: apt-get install nginx), or give the Ruby buildpack the path of an nginx program (RubyBuildpackOptions.nginx).',
  },
  RUBY_ENV_INVALID: {
    title: 'RUBY_ENV is not an environment name',
    kind: 'input',
    fix: 'Set RUBY_ENV to a name such as production or staging (letters, digits, "_" and "-"), or leave it unset for production.',
  },
  RUBY_RAKEGOALS_INVALID: {
    title: 'CC_RAKEGOALS holds a goal that cannot be run',
    kind: 'input',
    fix: 'List rake task names separated by commas, e.g. CC_RAKEGOALS=assets:precompile,db:migrate.',
  },
  RUBY_PUMA_SETTING_INVALID: {
    title: 'A Puma sizing variable is not a valid number',
    kind: 'input',
    fix: 'Set CC_PUMA_WORKERS to an integer (0 or more) and CC_PUMA_THREADS to n or min:max with 1 <= min <= max.',
  },
  RUBY_SIDEKIQ_FILE_MISSING: {
    title: 'A file listed in CC_SIDEKIQ_FILES does not exist',
    kind: 'input',
    fix: 'List paths from the repository root of committed Sidekiq YAML files, e.g. CC_SIDEKIQ_FILES=config/sidekiq.yml.',
  },
  RUBY_SIDEKIQ_FILE_INVALID: {
    title: 'A Sidekiq configuration file is not valid YAML',
    kind: 'input',
    fix: 'Correct the YAML at the position shown; the file must hold a mapping such as ":concurrency: 5".',
  },
  RUBY_SIDEKIQ_GEM_MISSING: {
    title: 'Sidekiq is enabled but the bundle does not include the gem sidekiq',
    kind: 'input',
    fix: 'Add gem "sidekiq" to the Gemfile, run `bundle install` and commit the lock file; or unset CC_ENABLE_SIDEKIQ and CC_SIDEKIQ_FILES.',
  },
  RUBY_STATIC_PREFIX_ROOT: {
    title: 'STATIC_URL_PREFIX is "/"',
    kind: 'input',
    fix: 'Serve static files under a prefix such as STATIC_URL_PREFIX=/public/ (the application itself answers "/").',
  },
  RUBY_STATIC_SETTING_INVALID: {
    title: 'STATIC_FILES_PATH or STATIC_URL_PREFIX is not usable',
    kind: 'input',
    fix: 'Set both: STATIC_FILES_PATH to a directory of the application (e.g. /public/) and STATIC_URL_PREFIX to a URL path (e.g. /static/), using letters, digits, "-", "_", "." and "/".',
  },
  RUBY_NGINX_SETTING_INVALID: {
    title: 'A web-server variable holds a value nginx cannot be given safely',
    kind: 'input',
    fix: 'Correct the variable named in the message (NGINX_READ_TIMEOUT: a whole number of seconds, 1 to 86400).',
  },
  RUBY_BASIC_AUTH_INVALID: {
    title: 'A basic-auth variable is not login:password',
    kind: 'input',
    fix: 'Set CC_HTTP_BASIC_AUTH (and CC_HTTP_BASIC_AUTH_<n>) to login:password, with exactly one ":" (none in the login or the password) and no spaces or line breaks.',
  },
  RUBY_BASIC_AUTH_NAME_INVALID: {
    title: 'A basic-auth variable has a suffix other than a number',
    kind: 'input',
    fix: 'Name extra basic-auth users CC_HTTP_BASIC_AUTH_<n> with n a number (CC_HTTP_BASIC_AUTH_1, _2, …), or use CC_HTTP_BASIC_AUTH.',
  },
  RUBY_HTTP_JSON_INVALID: {
    title: 'platform/http.json is not valid',
    kind: 'input',
    fix: 'Correct the field named in the message; see the meaning and allowed values of each field in the Ruby buildpack documentation.',
  },
});

/** The Ruby buildpack's warning codes (RUNPLAN_W_RUBY_…). */
export const RubyWarnings = defineWarnings({
  RUBY_VERSION_CONFLICT: {
    title: 'Sources of the Ruby version disagree',
    fix: "Make the Gemfile ruby directive, CC_RUBY_VERSION and the lock file's RUBY VERSION name the same Ruby.",
  },
  RUBY_VERSION_FILE_IGNORED: {
    title: '.ruby-version names another Ruby, and the Gemfile does not read it',
    fix: 'Make .ruby-version name the Ruby deployed, or add ruby file: ".ruby-version" to the Gemfile (or set CC_RUBY_VERSION) to deploy the Ruby it names.',
  },
  RUBY_SIDEKIQ_LOGFILE_IGNORED: {
    title: 'Sidekiq 6 ignores :logfile: and :pidfile:',
    fix: 'Remove :logfile: and :pidfile: from the Sidekiq file; Sidekiq logs to standard output, which runplan captures.',
  },
  RUBY_SIDEKIQ_FILES_EMPTY: {
    title: 'CC_SIDEKIQ_FILES is set but lists no file',
    fix: 'List Sidekiq files separated by commas (CC_SIDEKIQ_FILES=config/sidekiq.yml), or unset the variable.',
  },
  RUBY_SECRET_KEY_BASE_MISSING: {
    title: 'config/secret.yml references SECRET_KEY_BASE but the variable is not set',
    fix: 'Generate a key with `rake secret` and set it as SECRET_KEY_BASE.',
  },
});
