import { webOnlyContribution } from '../../helpers/contribution.js';
import { standInPublicKey, standInSshKey } from '../../helpers/stand-ins.js';
import type { RunPlan } from '../../../src/plan/schema.js';
import { type BadInputCase, big, binary, type CaseRow, inArea, TERMINAL_ATTACK } from '../corpus.js';

const USAGE = 'RUNPLAN_E_CLI_USAGE';
const HOST = 'RUNPLAN_E_HOST_INVALID_SETTING';
const PLAN_INVALID = 'RUNPLAN_E_PLAN_DOCUMENT_INVALID';
const HEALTH_PATH = 'RUNPLAN_E_HEALTH_CHECK_PATH_INVALID';
const withPlan = (args: string[] = []) => ({
  command: 'build' as const,
  markers: false as const,
  args: ['--plan', '{plan}', '--env', 'NPM_TOKEN', ...args],
  hostEnv: { NPM_TOKEN: 'corpus_plan_token_d1' },
  secrets: ['corpus_plan_token_d1'],
});

/** Options of the command line. */
const options: CaseRow[] = [
  { id: 'port-garbage', args: ['--port', 'abc'], expect: { exit: 2, code: HOST } },
  { id: 'port-zero', args: ['--port', '0'], expect: { exit: 2, code: HOST } },
  { id: 'port-too-big', args: ['--port', '65536'], expect: { exit: 2, code: HOST } },
  { id: 'port-negative', args: ['--port=-1'], expect: { exit: 2, code: HOST } },
  { id: 'port-float', args: ['--port', '80.5'], expect: { exit: 2, code: HOST } },
  { id: 'port-escapes', args: ['--port', TERMINAL_ATTACK], expect: { exit: 2, code: HOST } },
  { id: 'port-huge', args: ['--port', '9'.repeat(10_000)], expect: { exit: 2, code: HOST } },
  { id: 'cpus-garbage', args: ['--cpus', 'all'], expect: { exit: 2, code: HOST } },
  { id: 'cpus-zero', args: ['--cpus', '0'], expect: { exit: 2, code: HOST } },
  { id: 'cpus-huge', args: ['--cpus', '1e400'], expect: { exit: 2, code: HOST } },
  { id: 'memory-garbage', args: ['--memory', 'lots'], expect: { exit: 2, code: HOST } },
  { id: 'memory-tiny', args: ['--memory', '1K'], expect: { exit: 2, code: HOST } },
  { id: 'memory-negative', args: ['--memory=-2G'], expect: { exit: 2, code: HOST } },
  { id: 'timeout-garbage', args: ['--timeout', 'soon'], expect: { exit: 2, code: USAGE } },
  { id: 'timeout-negative', args: ['--timeout=-5'], expect: { exit: 2, code: USAGE } },
  { id: 'step-timeout-zero', command: 'build', args: ['--step-timeout', '0'], expect: { exit: 2, code: USAGE } },
  { id: 'step-timeout-huge', command: 'build', args: ['--step-timeout', '1e30'], expect: { exit: 2, code: USAGE } },
  { id: 'lock-wait-garbage', command: 'build', args: ['--lock-wait', 'x'], expect: { exit: 2, code: USAGE } },
  { id: 'stability-window-negative', args: ['--stability-window=-1'], expect: { exit: 2, code: USAGE } },
  { id: 'stability-window-escapes', args: ['--stability-window', TERMINAL_ATTACK], expect: { exit: 2, code: USAGE } },
  {
    id: 'work-dir-is-file',
    command: 'build',
    args: ['--work-dir', '{case}/work-file'],
    outside: { 'work-file': 'not a directory\n' },
    expect: { exit: 1, code: 'RUNPLAN_E_BUILD_WORKSPACE', includes: ['cannot create the work directory {case}/work-file/'], excludes: ['[runtime]'] },
  },
  { id: 'build-step-timeout-env-garbage', command: 'build', hostEnv: { RUNPLAN_BUILD_STEP_TIMEOUT: 'never' }, expect: { exit: 2, code: HOST } },
  { id: 'build-lock-wait-env-negative', command: 'build', hostEnv: { RUNPLAN_BUILD_LOCK_WAIT: '-1' }, expect: { exit: 2, code: HOST } },
  { id: 'stability-window-env-garbage', hostEnv: { RUNPLAN_STABILITY_WINDOW: '3s' }, expect: { exit: 2, code: HOST } },
  { id: 'app-path-env-relative', command: 'build', hostEnv: { RUNPLAN_APP_PATH: 'bin:/usr/bin' }, expect: { exit: 2, code: HOST } },
  { id: 'app-path-env-empty-entry', command: 'build', hostEnv: { RUNPLAN_APP_PATH: '/opt/bin::/usr/bin' }, expect: { exit: 2, code: HOST } },
  { id: 'type-unknown', args: ['--type', 'php'], expect: { exit: 2, code: 'RUNPLAN_E_DETECT_UNKNOWN_TYPE' } },
  { id: 'type-escapes', args: ['--type', TERMINAL_ATTACK], expect: { exit: 2, code: 'RUNPLAN_E_DETECT_UNKNOWN_TYPE' } },
  { id: 'type-mismatch', args: ['--type', 'ruby'], expect: { exit: 2, code: 'RUNPLAN_E_DETECT_REJECTED' } },
  { id: 'unknown-option', args: ['--evil', 'x'], expect: { exit: 2, code: USAGE } },
  { id: 'node-env-file-option', args: ['--env-file', '{sentinel}/host-file'], expect: { exit: 2, code: USAGE } },
  { id: 'node-env-file-equals', args: ['--env-file={sentinel}/host-file'], expect: { exit: 2, code: USAGE } },
  { id: 'plan-with-inventory-and-plan', args: ['--plan', '{case}/none.json'], expect: { exit: 2, code: USAGE } },
  { id: 'out-on-plan', args: ['--out', '{sentinel}/writable/x'], expect: { exit: 2, code: USAGE } },
  { id: 'env-malformed', args: ['--env', 'NPM_TOKEN corpus_malformed_tok_66'], secrets: ['corpus_malformed_tok_66'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_MALFORMED_ASSIGNMENT' } },
  { id: 'env-invalid-name', args: ['--env', '1ABC=x'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_INVALID_NAME' } },
  { id: 'env-name-escapes', args: ['--env', `${TERMINAL_ATTACK}=x`], expect: { exit: 2, code: 'RUNPLAN_E_ENV_INVALID_NAME' } },
  { id: 'env-name-huge', args: ['--env', `${'A'.repeat(100_000)}=x`], expect: { exit: 0 } },
  // A secret's value in runplan's own arguments: readable in /proc by every process of the machine (issue 21).
  {
    id: 'env-secret-in-arguments',
    args: ['--env', 'NPM_TOKEN=corpus_argv_tok_71'],
    secrets: ['corpus_argv_tok_71'],
    expect: { exit: 0, code: 'RUNPLAN_W_ENV_SECRET_ON_COMMAND_LINE', includes: ['(--env NPM_TOKEN=…)', 'export NPM_TOKEN'] },
  },
  {
    id: 'addon-env-secret-in-arguments',
    args: ['--addon-env', 'pg:PG_PASSWORD=corpus_argv_pw_72'],
    secrets: ['corpus_argv_pw_72'],
    expect: { exit: 0, code: 'RUNPLAN_W_ENV_SECRET_ON_COMMAND_LINE', includes: ['(--addon-env pg:PG_PASSWORD=…)', '--addon-env-file ADDON=FILE'] },
  },
  {
    id: 'env-secret-from-environment',
    args: ['--env', 'CORPUS_API_TOKEN', '--addon-env', 'pg:PG_PASSWORD'],
    hostEnv: { CORPUS_API_TOKEN: 'corpus_env_tok_73', PG_PASSWORD: 'corpus_env_pw_74' },
    secrets: ['corpus_env_tok_73', 'corpus_env_pw_74'],
    expect: { exit: 0, includes: ['CORPUS_API_TOKEN=*** (secret)  ← application (--env)', 'PG_PASSWORD=*** (secret)  ← addon (addon pg)'] },
  },
  // Issue 21: a command holding a secret's value ended in exit 70 with a stack trace.
  {
    id: 'run-command-holds-secret',
    env: { CC_RUN_COMMAND: 'node server.js --token corpus_cmd_tok_85', API_TOKEN: 'corpus_cmd_tok_85' },
    secrets: ['corpus_cmd_tok_85'],
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_SECRET_COPIED', includes: ['Write $API_TOKEN in CC_RUN_COMMAND'] },
  },
  {
    id: 'variable-holds-secret',
    env: { APP_SETTINGS: 'mode=fast;key=corpus_plain_tok_86', API_TOKEN: 'corpus_plain_tok_86' },
    secrets: ['corpus_plain_tok_86'],
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_SECRET_COPIED', includes: ['have the application read API_TOKEN'] },
  },
  { id: 'env-from-environment-unset', args: ['--env', 'CORPUS_UNSET_TOKEN'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_NOT_SET', includes: ['--env CORPUS_UNSET_TOKEN'] } },
  { id: 'env-from-environment-token-shaped', args: ['--env', 'ghp_corpusTokenShaped75'], secrets: ['ghp_corpusTokenShaped75'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_NOT_SET' } },
  { id: 'addon-env-no-addon', args: ['--addon-env', 'DB_PASSWORD=corpus_addon_pw_12'], secrets: ['corpus_addon_pw_12'], expect: { exit: 2, code: USAGE } },
  // Without "=" a name takes its value from runplan's environment: a secret pasted there is still not shown.
  { id: 'addon-env-malformed', args: ['--addon-env', 'pg:corpus_addon_pw_13'], secrets: ['corpus_addon_pw_13'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_NOT_SET' } },
  { id: 'addon-env-malformed-value', args: ['--addon-env', 'pg:corpus addon_pw_14'], secrets: ['addon_pw_14'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_MALFORMED_ASSIGNMENT' } },
  { id: 'addon-env-file-no-name', args: ['--addon-env-file', '{case}/a.env'], outside: { 'a.env': 'X=1\n' }, expect: { exit: 2, code: USAGE } },
  { id: 'addon-env-file-missing', args: ['--addon-env-file', 'pg={case}/none.env'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_FILE_UNREADABLE' } },
  { id: 'deploy-engine-escapes', command: 'raw', args: ['deploy', '{app}', '--engine', TERMINAL_ATTACK], expect: { exit: 2, code: USAGE } },
  { id: 'deploy-podman-replicas', command: 'raw', args: ['deploy', '{app}', '--engine', 'podman', '--replicas', '2'], expect: { exit: 2, code: USAGE } },
  { id: 'app-dir-missing', command: 'raw', args: ['plan', '{case}/no-app', '--inventory', '{inventory}'], expect: { exit: 2, code: 'RUNPLAN_E_APP_DIR_NOT_FOUND' } },
  { id: 'app-dir-is-file', command: 'raw', args: ['plan', '{app}/server.js', '--inventory', '{inventory}'], expect: { exit: 2, code: 'RUNPLAN_E_APP_DIR_NOT_FOUND' } },
  { id: 'app-dir-empty', base: 'empty', expect: { exit: 2, code: 'RUNPLAN_E_DETECT_NO_MATCH' } },
  { id: 'app-dir-escapes', command: 'raw', args: ['plan', `{case}/${TERMINAL_ATTACK}`, '--inventory', '{inventory}'], expect: { exit: 2, code: 'RUNPLAN_E_APP_DIR_NOT_FOUND' } },
  { id: 'check-url-garbage', command: 'raw', markers: false, args: ['check', 'not a url', '--timeout', '1'], expect: { exit: 2, code: USAGE } },
  { id: 'check-url-file-scheme', command: 'raw', markers: false, args: ['check', 'file:///etc/passwd', '--timeout', '1'], expect: { exit: 2, code: USAGE } },
  {
    id: 'check-url-credentials',
    command: 'raw',
    markers: false,
    args: ['check', 'http://u:corpus_url_pw_44@127.0.0.1:1/', '--timeout', '1'],
    secrets: ['corpus_url_pw_44'],
    expect: { exit: 1, code: 'RUNPLAN_E_HEALTH_NOT_LISTENING' },
  },
  { id: 'diff-not-json', command: 'raw', markers: false, outside: { 'a.json': '{', 'b.json': '{}' }, args: ['diff', '{case}/a.json', '{case}/b.json'], expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'diff-host-file', command: 'raw', markers: false, args: ['diff', '{sentinel}/host-file', '{sentinel}/host-file'], expect: { exit: 2, code: PLAN_INVALID } },
];

/** Env files (--app-env-file, --addon-env-file). */
const envFiles: CaseRow[] = [
  { id: 'env-file-missing', args: ['--app-env-file', '{case}/none.env'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_FILE_UNREADABLE' } },
  { id: 'env-file-directory', args: ['--app-env-file', '{case}'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_FILE_UNREADABLE' } },
  {
    id: 'env-file-nul',
    outside: { 'n.env': 'A=1\nB=corpus_nul_val_08\u0000x\n' },
    args: ['--app-env-file', '{case}/n.env'],
    secrets: ['corpus_nul_val_08'],
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_VALUE_INVALID' },
  },
  { id: 'env-file-crlf', outside: { 'c.env': 'CC_NODE_VERSION=24\r\nA=1\r\n' }, args: ['--app-env-file', '{case}/c.env'], expect: { exit: 0 } },
  { id: 'env-file-bom', outside: { 'b.env': '\ufeffA=1\n' }, args: ['--app-env-file', '{case}/b.env'], expect: { exit: 0 } },
  { id: 'env-file-binary', outside: { 'x.env': binary(10_000) }, args: ['--app-env-file', '{case}/x.env'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_VALUE_INVALID' } },
  {
    id: 'env-file-no-equals',
    outside: { 'e.env': 'NPM_TOKEN corpus_noeq_tok_29\n' },
    args: ['--app-env-file', '{case}/e.env'],
    secrets: ['corpus_noeq_tok_29'],
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_MALFORMED_ASSIGNMENT' },
  },
  {
    id: 'env-file-unclosed-quote',
    outside: { 'q.env': 'NPM_TOKEN="corpus_unclosed_tok_30\n' },
    args: ['--app-env-file', '{case}/q.env'],
    secrets: ['corpus_unclosed_tok_30'],
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_MALFORMED_ASSIGNMENT' },
  },
  { id: 'env-file-invalid-name', outside: { 'i.env': 'A-B=1\n' }, args: ['--app-env-file', '{case}/i.env'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_INVALID_NAME' } },
  { id: 'env-file-escapes-in-name', outside: { 'i.env': `${TERMINAL_ATTACK}=1\n` }, args: ['--app-env-file', '{case}/i.env'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_INVALID_NAME' } },
  { id: 'env-file-huge-line', outside: { 'h.env': big('A', 5_000_000) }, args: ['--app-env-file', '{case}/h.env'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_MALFORMED_ASSIGNMENT' } },
  { id: 'env-file-many-lines', outside: { 'm.env': () => Array.from({ length: 300 }, (_, i) => `V${i}=${i}`).join('\n') }, args: ['--app-env-file', '{case}/m.env'], expect: { exit: 0 } },
  { id: 'env-file-host-file', args: ['--app-env-file', '{sentinel}/host-file'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_MALFORMED_ASSIGNMENT' } },
  { id: 'env-file-node-options', outside: { 'o.env': 'NODE_OPTIONS=--import=data:text/javascript,process.exit(42)\n' }, args: ['--app-env-file', '{case}/o.env'], expect: { exit: 0 } },
  {
    id: 'addon-env-file-nul',
    outside: { 'a.env': 'PG_PASSWORD=corpus_addon_nul_5\u0000\n' },
    args: ['--addon-env-file', 'pg={case}/a.env'],
    secrets: ['corpus_addon_nul_5'],
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_VALUE_INVALID' },
  },
  { id: 'addon-env-file-binary', outside: { 'a.env': binary(4000) }, args: ['--addon-env-file', 'pg={case}/a.env'], expect: { exit: 2, code: 'RUNPLAN_E_ENV_VALUE_INVALID' } },
];

/** Variables of every application: health-check paths and PORT. */
const coreVariables: CaseRow[] = [
  { id: 'health-path-relative', env: { CC_HEALTH_CHECK_PATH: 'health' }, expect: { exit: 2, code: HEALTH_PATH } },
  { id: 'health-path-absolute-url', env: { CC_HEALTH_CHECK_PATH: 'http://evil.example/' }, expect: { exit: 2, code: HEALTH_PATH } },
  { id: 'health-path-escapes', env: { CC_HEALTH_CHECK_PATH: `/${TERMINAL_ATTACK}` }, expect: { exit: 2, code: HEALTH_PATH } },
  { id: 'health-path-crlf', outside: { 'h.env': 'CC_HEALTH_CHECK_PATH="/a\r\nHost: evil"\n' }, args: ['--app-env-file', '{case}/h.env'], expect: { exit: 2, code: HEALTH_PATH } },
  { id: 'health-path-space', env: { CC_HEALTH_CHECK_PATH: '/a b' }, expect: { exit: 2, code: HEALTH_PATH } },
  { id: 'health-path-huge', env: { CC_HEALTH_CHECK_PATH: `/${'a'.repeat(100_000)}` }, expect: { exit: 0 } },
  { id: 'health-path-unknown-suffix', env: { CC_HEALTH_CHECK_PATH_abc: '/health' }, expect: { exit: 2, code: 'RUNPLAN_E_HEALTH_CHECK_PATH_NAME_INVALID' } },
  { id: 'health-path-numbered-bad', env: { CC_HEALTH_CHECK_PATH_1: 'no-slash' }, expect: { exit: 2, code: HEALTH_PATH } },
  { id: 'health-path-many', env: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`CC_HEALTH_CHECK_PATH_${i}`, `/p${i}`])), expect: { exit: 0 } },
  { id: 'app-folder-missing', env: { APP_FOLDER: 'apps/none' }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_NOT_FOUND' } },
  { id: 'app-folder-is-file', env: { APP_FOLDER: 'server.js' }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_NOT_FOUND' } },
  { id: 'app-folder-climbs-out', env: { APP_FOLDER: 'a/../../..' }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_OUTSIDE' } },
  { id: 'app-folder-absolute', env: { APP_FOLDER: '/etc' }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_OUTSIDE' } },
  { id: 'app-folder-link-out', env: { APP_FOLDER: 'web' }, files: { web: { link: '{sentinel}' } }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_OUTSIDE' } },
  { id: 'app-folder-link-below-out', env: { APP_FOLDER: 'up/writable' }, files: { up: { link: '{sentinel}' } }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_OUTSIDE' } },
  { id: 'app-folder-escapes', env: { APP_FOLDER: TERMINAL_ATTACK }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_NOT_FOUND' } },
  {
    id: 'app-folder-newline-exists',
    env: { APP_FOLDER: 'web\n==> build succeeded: forged line' },
    files: { 'web\n==> build succeeded: forged line': { dir: { 'package.json': '{"main":"x.js"}' } } },
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_NOT_FOUND', excludes: ['\n==> build succeeded'] },
  },
  { id: 'app-folder-huge', env: { APP_FOLDER: 'a/'.repeat(50_000) }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_NOT_FOUND' } },
  { id: 'app-folder-empty-folder', env: { APP_FOLDER: 'empty' }, files: { empty: { dir: true } }, expect: { exit: 2, code: 'RUNPLAN_E_DETECT_NO_MATCH' } },
  { id: 'app-folder-root', env: { APP_FOLDER: './' }, expect: { exit: 0 } },
  { id: 'build-cache-override-outside', env: { CC_OVERRIDE_BUILDCACHE: '../../etc' }, expect: { exit: 2, code: 'RUNPLAN_E_BUILD_CACHE_PATH_INVALID' } },
  { id: 'build-cache-override-absolute', env: { CC_OVERRIDE_BUILDCACHE: 'node_modules:/root/.ssh' }, expect: { exit: 2, code: 'RUNPLAN_E_BUILD_CACHE_PATH_INVALID' } },
  { id: 'build-cache-override-root', env: { CC_OVERRIDE_BUILDCACHE: '.' }, expect: { exit: 2, code: 'RUNPLAN_E_BUILD_CACHE_PATH_INVALID' } },
  // A cached path names a layer, printed on lines of runplan's own: no control character (issue 21).
  { id: 'build-cache-override-escapes', env: { CC_OVERRIDE_BUILDCACHE: TERMINAL_ATTACK }, expect: { exit: 2, code: 'RUNPLAN_E_BUILD_CACHE_PATH_INVALID' } },
  {
    id: 'build-cache-override-newline',
    env: { CC_OVERRIDE_BUILDCACHE: 'a\n==> build succeeded: forged line' },
    expect: { exit: 2, code: 'RUNPLAN_E_BUILD_CACHE_PATH_INVALID', excludes: ['\n==> build succeeded'] },
  },
  { id: 'build-cache-override-long', env: { CC_OVERRIDE_BUILDCACHE: 'a'.repeat(5000) }, expect: { exit: 2, code: 'RUNPLAN_E_BUILD_CACHE_PATH_INVALID' } },
  { id: 'build-cache-override-many', env: { CC_OVERRIDE_BUILDCACHE: Array.from({ length: 500 }, (_, i) => `p${i}`).join(':') }, expect: { exit: 0 } },
  { id: 'build-cache-ignore-outside', env: { CC_IGNORE_FROM_BUILDCACHE: 'a/../../b' }, expect: { exit: 2, code: 'RUNPLAN_E_BUILD_CACHE_PATH_INVALID' } },
  { id: 'build-cache-ignore-separators-only', env: { CC_IGNORE_FROM_BUILDCACHE: ':::' }, expect: { exit: 0 } },
  { id: 'port-variable-overridden', env: { PORT: 'abc' }, expect: { exit: 0 } },
  { id: 'instance-number-variable', env: { INSTANCE_NUMBER: TERMINAL_ATTACK }, expect: { exit: 0 } },
  { id: 'value-escapes-shown-escaped', env: { CORPUS_PLAIN: TERMINAL_ATTACK }, expect: { exit: 0 } },
  { id: 'secret-name-value-hidden', env: { CORPUS_API_KEY: 'corpus_api_key_val_7e' }, secrets: ['corpus_api_key_val_7e'], expect: { exit: 0 } },
  {
    id: 'secret-megabyte',
    outside: { 's.env': () => `CORPUS_SECRET=${'corpus_mb_secret_'.repeat(62_000)}\n` },
    args: ['--app-env-file', '{case}/s.env'],
    secrets: ['corpus_mb_secret_'],
    expect: { exit: 0 },
  },
  {
    id: 'cache-dir-env-garbage',
    command: 'build',
    hostEnv: { RUNPLAN_CACHE_DIR: '{sentinel}/host-file' },
    files: { 'package.json': '{' },
    expect: { exit: 2, code: 'RUNPLAN_E_NODE_PACKAGE_JSON_INVALID' },
  },
];

/** Saved files runplan reads back: inventories, plans (--plan, --previous). */
const savedFiles: CaseRow[] = [
  { id: 'inventory-missing', command: 'raw', args: ['plan', '{app}', '--inventory', '{case}/none.json'], expect: { exit: 2, code: 'RUNPLAN_E_INVENTORY_INVALID' } },
  { id: 'inventory-not-json', command: 'raw', outside: { 'i.json': '{' }, args: ['plan', '{app}', '--inventory', '{case}/i.json'], expect: { exit: 2, code: 'RUNPLAN_E_INVENTORY_INVALID' } },
  {
    id: 'inventory-wrong-schema',
    command: 'raw',
    outside: { 'i.json': '{"schemaVersion": 99}' },
    args: ['plan', '{app}', '--inventory', '{case}/i.json'],
    expect: { exit: 2, code: 'RUNPLAN_E_INVENTORY_INVALID' },
  },
  { id: 'inventory-host-file', command: 'raw', args: ['plan', '{app}', '--inventory', '{sentinel}/host-file'], expect: { exit: 2, code: 'RUNPLAN_E_INVENTORY_INVALID' } },
  { id: 'inventory-binary', command: 'raw', outside: { 'i.json': binary(100_000) }, args: ['plan', '{app}', '--inventory', '{case}/i.json'], expect: { exit: 2, code: 'RUNPLAN_E_INVENTORY_INVALID' } },
  { id: 'inventory-directory', command: 'raw', args: ['plan', '{app}', '--inventory', '{case}'], expect: { exit: 2, code: 'RUNPLAN_E_INVENTORY_INVALID' } },
  { id: 'previous-not-json', outside: { 'p.json': '{"x":' }, args: ['--previous', '{case}/p.json'], expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'previous-host-file', args: ['--previous', '{sentinel}/host-file'], expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'previous-tampered', plan: (p) => ({ ...p, runtimes: 'node' }), args: ['--previous', '{plan}'], expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'saved-plan-truncated', ...withPlan(), plan: (p) => JSON.stringify(p).slice(0, 500), expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'saved-plan-not-object', ...withPlan(), plan: () => '[1,2,3]', expect: { exit: 2, code: 'RUNPLAN_E_PLAN_SCHEMA_UNSUPPORTED' } },
  { id: 'saved-plan-schema-99', ...withPlan(), plan: (p) => ({ ...p, schemaVersion: 99 }), expect: { exit: 2, code: 'RUNPLAN_E_PLAN_SCHEMA_UNSUPPORTED' } },
  { id: 'saved-plan-wrong-types', ...withPlan(), plan: (p) => ({ ...p, processes: 'web', buildSteps: 7 }), expect: { exit: 2, code: PLAN_INVALID } },
  {
    id: 'saved-plan-file-escapes',
    ...withPlan(),
    plan: (p) => ({ ...p, files: [{ path: '../../../x', content: [{ text: 'x' }], mode: 420, phase: 'build' }] }),
    expect: { exit: 2, code: PLAN_INVALID },
  },
  { id: 'saved-plan-absolute-file', ...withPlan(), plan: (p) => ({ ...p, files: [{ path: '/etc/x', content: [{ text: 'x' }], mode: 420, phase: 'build' }] }), expect: { exit: 2, code: PLAN_INVALID } },
  {
    id: 'saved-plan-after-build-run-file',
    ...withPlan(),
    plan: (p) => ({ ...p, files: [{ path: 'x.conf', content: [{ text: 'x' }], mode: 384, phase: 'run', secret: true, reason: 'r', afterBuild: { action: 'remove', reason: 'r' } }] }),
    expect: { exit: 2, code: PLAN_INVALID, includes: ['afterBuild is only for build-phase files that hold a secret'] },
  },
  { id: 'saved-plan-schema-string', ...withPlan(), plan: (p) => ({ ...p, schemaVersion: '2' }), expect: { exit: 2, code: 'RUNPLAN_E_PLAN_SCHEMA_UNSUPPORTED' } },
  { id: 'saved-plan-binary', ...withPlan(), plan: () => binary(50_000)().toString('latin1'), expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'saved-plan-host-file', command: 'build', markers: false, args: ['--plan', '{sentinel}/host-file'], expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'saved-plan-secret-missing', command: 'build', markers: false, plan: (p) => p, args: ['--plan', '{plan}'], expect: { exit: 2, code: 'RUNPLAN_E_PLAN_SECRET_MISSING' } },
  { id: 'saved-plan-env-mismatch', ...withPlan(['--env', 'CC_NODE_VERSION=20']), plan: (p) => p, expect: { exit: 2, code: 'RUNPLAN_E_PLAN_ENV_MISMATCH' } },
  // The instance it was sized for: another one given, or a tampered one.
  { id: 'saved-plan-other-instance', ...withPlan(['--cpus', '64']), plan: (p) => p, expect: { exit: 2, code: HOST, includes: ['the plan was sized for an instance of', 'not 64 CPUs'] } },
  {
    id: 'saved-plan-instance-zero',
    ...withPlan(),
    plan: (p) => ({ ...p, instance: { ...(p as { instance: object }).instance, cpus: 0, memoryMb: '2G' } }),
    expect: { exit: 2, code: PLAN_INVALID, includes: ['instance.cpus', 'instance.memoryMb'] },
  },
  { id: 'saved-plan-instance-no-decision', ...withPlan(), plan: (p) => ({ ...p, instance: { cpus: 2, memoryMb: 2048 } }), expect: { exit: 2, code: PLAN_INVALID, includes: ['instance.decision'] } },
  {
    id: 'saved-plan-token-newline',
    command: 'build',
    markers: false,
    plan: (p) => p,
    outside: { 't.env': 'NPM_TOKEN="corpus_plan_nl_52\nscript-shell=/tmp/x"\n' },
    args: ['--plan', '{plan}', '--app-env-file', '{case}/t.env'],
    secrets: ['corpus_plan_nl_52'],
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_VALUE_INVALID' },
  },
];

/** A change of the saved plan, typed as the plan it is. */
const edit = (change: (p: RunPlan) => unknown) => (p: Record<string, unknown>) => change(p as unknown as RunPlan);
/** The saved plan with its last build step (install) changed. */
const lastStep = (change: Record<string, unknown>) => edit((p) => ({ ...p, build: { ...p.build, steps: [...p.build.steps.slice(0, -1), { ...p.build.steps.at(-1), ...change }] } }));
const webProcess = (change: Record<string, unknown>) => edit((p) => ({ ...p, processes: p.processes.map((x) => ({ ...x, ...change })) }));
const plannedFile = (mode: number, secret: boolean) => ({ path: '.corpus', phase: 'build', mode, secret, content: [{ text: 'x' }], reason: 'corpus' });
const FORGED = '\n==> build succeeded: forged line';
/** A saved plan given to the other commands that carry one out (a refusal comes before any engine is asked). */
const planArgs = ['--plan', '{plan}', '--env', 'NPM_TOKEN=corpus_plan_token_d1'];
const otherCarriers = {
  run: ['run', '{app}', ...planArgs, '--cache-dir', '{case}/cache', '--work-dir', '{case}/work'],
  image: ['image', '{app}', ...planArgs, '--out', '{case}/context', '--cache-dir', '{case}/cache', '--work-dir', '{case}/work'],
  k8s: ['k8s', '{app}', ...planArgs, '--out', '{case}/k8s', '--cpus', '1', '--memory', '1G', '--image', 'corpus/app:1', '--cache-dir', '{case}/cache', '--work-dir', '{case}/work'],
};

/**
 * A saved plan is checked as strictly as a fresh one, before anything of it runs
 * (issue 21): modes, paths, names, sizes, its variables, and its folder on disk
 * again, with the codes planning gives the same values.
 */
const savedPlanChecks: CaseRow[] = [
  { id: 'saved-plan-mode-negative', ...withPlan(), plan: edit((p) => ({ ...p, files: [plannedFile(-1, false)] })), expect: { exit: 2, code: PLAN_INVALID, includes: ['files.0.mode'] } },
  { id: 'saved-plan-mode-setuid', ...withPlan(), plan: edit((p) => ({ ...p, files: [plannedFile(0o4755, false)] })), expect: { exit: 2, code: PLAN_INVALID, includes: ['files.0.mode'] } },
  { id: 'saved-plan-mode-huge', ...withPlan(), plan: edit((p) => ({ ...p, files: [plannedFile(2 ** 40, false)] })), expect: { exit: 2, code: PLAN_INVALID } },
  {
    id: 'saved-plan-secret-file-readable',
    ...withPlan(),
    plan: edit((p) => ({ ...p, files: [plannedFile(0o644, true)] })),
    expect: { exit: 2, code: PLAN_INVALID, includes: ['private to its owner'] },
  },
  { id: 'saved-plan-cwd-climbs', ...withPlan(), plan: lastStep({ cwd: '../../..' }), expect: { exit: 2, code: PLAN_INVALID, includes: ['build.steps.3.cwd'], excludes: ['[install]'] } },
  { id: 'saved-plan-cwd-absolute', ...withPlan(), plan: lastStep({ cwd: '/tmp' }), expect: { exit: 2, code: PLAN_INVALID, excludes: ['[install]'] } },
  { id: 'saved-plan-cwd-app-home-climbs', ...withPlan(), plan: lastStep({ cwd: '${APP_HOME}/../..' }), expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'saved-plan-process-cwd-climbs', ...withPlan(), plan: webProcess({ cwd: '../..' }), expect: { exit: 2, code: PLAN_INVALID, includes: ['processes.0.cwd'] } },
  { id: 'saved-plan-path-prepend-climbs', ...withPlan(), plan: lastStep({ pathPrepend: ['../../../bin'] }), expect: { exit: 2, code: PLAN_INVALID } },
  {
    id: 'saved-plan-socket-outside',
    ...withPlan(),
    plan: webProcess({ startAfter: [{ kind: 'http-unix-socket', socket: '/var/run/docker.sock', path: '/' }] }),
    expect: { exit: 2, code: PLAN_INVALID, includes: ['startAfter'] },
  },
  {
    id: 'saved-plan-npm-name-newline',
    ...withPlan(),
    plan: edit((p) => ({
      ...p,
      build: {
        ...p.build,
        steps: p.build.steps.map((s) => (s.run.kind === 'install' && s.run.source.type === 'npm' ? { ...s, run: { ...s.run, source: { ...s.run.source, name: `node${FORGED}` } } } : s)),
      },
    })),
    expect: { exit: 2, code: PLAN_INVALID, excludes: ['\n==> build succeeded'] },
  },
  { id: 'saved-plan-file-dot-parts', ...withPlan(), plan: edit((p) => ({ ...p, files: [{ ...plannedFile(0o644, false), path: './a//b' }] })), expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'saved-plan-step-name-newline', ...withPlan(), plan: lastStep({ name: `install${FORGED}` }), expect: { exit: 2, code: PLAN_INVALID, excludes: ['\n==> build succeeded'] } },
  { id: 'saved-plan-process-name-newline', ...withPlan(), plan: webProcess({ name: `web${FORGED}` }), expect: { exit: 2, code: PLAN_INVALID, excludes: ['\n==> build succeeded'] } },
  {
    id: 'saved-plan-health-path-newline',
    ...withPlan(),
    plan: edit((p) => ({ ...p, healthCheck: { ...p.healthCheck, kind: 'http', paths: [{ path: `/x${FORGED}`, source: 'CC_HEALTH_CHECK_PATH' }] } })),
    expect: { exit: 2, code: HEALTH_PATH, excludes: ['\n==> build succeeded'] },
  },
  { id: 'saved-plan-health-http-no-path', ...withPlan(), plan: edit((p) => ({ ...p, healthCheck: { ...p.healthCheck, kind: 'http', paths: [] } })), expect: { exit: 2, code: PLAN_INVALID } },
  {
    id: 'saved-plan-folder-newline',
    ...withPlan(),
    plan: edit((p) => ({ ...p, app: { ...p.app, folder: `web${FORGED}` } })),
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_NOT_FOUND', excludes: ['\n==> build succeeded'] },
  },
  { id: 'saved-plan-folder-climbs', ...withPlan(), plan: edit((p) => ({ ...p, app: { ...p.app, folder: '../../..' } })), expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_OUTSIDE' } },
  { id: 'saved-plan-folder-absolute', ...withPlan(), plan: edit((p) => ({ ...p, app: { ...p.app, folder: '/etc' } })), expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_OUTSIDE' } },
  { id: 'saved-plan-folder-not-normal', ...withPlan(), plan: edit((p) => ({ ...p, app: { ...p.app, folder: 'web/../web' } })), files: { web: { dir: true } }, expect: { exit: 2, code: PLAN_INVALID } },
  { id: 'saved-plan-folder-missing', ...withPlan(), plan: edit((p) => ({ ...p, app: { ...p.app, folder: 'web' } })), expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_NOT_FOUND' } },
  // The plan was made while web/ was a folder; it is now a link to a host folder, where .npmrc and .runplan/ would be written.
  {
    id: 'saved-plan-folder-now-link-out',
    ...withPlan(),
    plan: edit((p) => ({ ...p, app: { ...p.app, folder: 'web' } })),
    files: { web: { link: '{sentinel}/writable' } },
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_OUTSIDE', excludes: ['[install]'] },
  },
  {
    id: 'saved-plan-folder-now-link-out-image',
    command: 'raw',
    markers: false,
    secrets: ['corpus_plan_token_d1'],
    plan: edit((p) => ({ ...p, app: { ...p.app, folder: 'web' } })),
    files: { web: { link: '{sentinel}/writable' } },
    args: otherCarriers.image,
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FOLDER_OUTSIDE' },
  },
  {
    id: 'saved-plan-env-nul',
    ...withPlan(),
    plan: edit((p) => ({
      ...p,
      environment: { ...p.environment, variables: [...p.environment.variables, { name: 'CORPUS', source: 'application', origin: '--env', secret: false, value: 'a\u0000b' }] },
    })),
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_VALUE_INVALID', excludes: ['[install]'] },
  },
  { id: 'saved-plan-step-env-nul', ...withPlan(), plan: lastStep({ env: { CORPUS: 'a\u0000b' } }), expect: { exit: 2, code: 'RUNPLAN_E_ENV_VALUE_INVALID' } },
  {
    id: 'saved-plan-env-name-invalid',
    ...withPlan(),
    plan: edit((p) => ({
      ...p,
      environment: { ...p.environment, variables: [...p.environment.variables, { name: `A=B${FORGED}`, source: 'application', origin: '--env', secret: false, value: 'x' }] },
    })),
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_INVALID_NAME', excludes: ['\n==> build succeeded'] },
  },
  {
    id: 'saved-plan-secret-with-value',
    ...withPlan(),
    plan: edit((p) => ({ ...p, environment: { ...p.environment, variables: p.environment.variables.map((v) => (v.secret ? { ...v, value: 'corpus_planted_secret_77' } : v)) } })),
    secrets: ['corpus_plan_token_d1', 'corpus_planted_secret_77'],
    expect: { exit: 2, code: PLAN_INVALID },
  },
  {
    id: 'saved-plan-duplicate-step',
    ...withPlan(),
    plan: edit((p) => ({ ...p, build: { ...p.build, steps: [...p.build.steps, p.build.steps.at(-1)] } })),
    expect: { exit: 2, code: PLAN_INVALID, includes: ['two build steps are named'] },
  },
  { id: 'saved-plan-unknown-layer', ...withPlan(), plan: lastStep({ layer: 'corpus-none' }), expect: { exit: 2, code: PLAN_INVALID, includes: ['corpus-none'] } },
  {
    id: 'saved-plan-version-huge',
    ...withPlan(),
    plan: edit((p) => ({ ...p, schemaVersion: 99, runplanVersion: '9'.repeat(5_000_000) })),
    expect: { exit: 2, code: 'RUNPLAN_E_PLAN_SCHEMA_UNSUPPORTED', includes: ['99…)'] },
  },
  { id: 'saved-plan-version-huge-current', ...withPlan(), plan: edit((p) => ({ ...p, runplanVersion: '9'.repeat(5_000_000) })), expect: { exit: 2, code: PLAN_INVALID, includes: ['runplanVersion'] } },
  {
    id: 'saved-plan-many-invalid-steps',
    ...withPlan(),
    plan: edit((p) => ({ ...p, build: { ...p.build, steps: Array.from({ length: 100_000 }, () => ({ name: 7 })) } })),
    expect: { exit: 2, code: PLAN_INVALID, includes: ['more problems'] },
  },
  { id: 'saved-plan-key-huge', ...withPlan(), plan: lastStep({ env: { ['K'.repeat(1_000_000)]: 1 } }), expect: { exit: 2, code: PLAN_INVALID } },
  {
    id: 'saved-plan-fifo',
    command: 'build',
    markers: false,
    outside: { 'plan.fifo': { fifo: true } },
    args: ['--plan', '{case}/plan.fifo'],
    expect: { exit: 2, code: PLAN_INVALID, includes: ['not a regular file'] },
  },
  {
    id: 'saved-plan-too-large',
    command: 'build',
    markers: false,
    outside: { 'big.json': big(' ', 17 * 1024 * 1024) },
    args: ['--plan', '{case}/big.json'],
    expect: { exit: 2, code: PLAN_INVALID, includes: ['at most'] },
  },
  {
    id: 'saved-plan-run-cwd-climbs',
    command: 'raw',
    markers: false,
    secrets: ['corpus_plan_token_d1'],
    plan: lastStep({ cwd: '../../..' }),
    args: otherCarriers.run,
    expect: { exit: 2, code: PLAN_INVALID },
  },
  {
    id: 'saved-plan-image-cwd-climbs',
    command: 'raw',
    markers: false,
    secrets: ['corpus_plan_token_d1'],
    plan: lastStep({ cwd: '../../..' }),
    args: otherCarriers.image,
    expect: { exit: 2, code: PLAN_INVALID },
  },
  {
    id: 'saved-plan-k8s-cwd-climbs',
    command: 'raw',
    markers: false,
    secrets: ['corpus_plan_token_d1'],
    plan: lastStep({ cwd: '../../..' }),
    args: otherCarriers.k8s,
    expect: { exit: 2, code: PLAN_INVALID },
  },
];

/** A minimal buildpack module of the host's (`--buildpack`), with `parts` of its object literal replaced. */
const hostBuildpack = (parts: { detect?: string; plan?: string; extra?: string }) =>
  [
    'export default {',
    "  id: 'corpus', name: 'Corpus', priority: 100, defaultHealthCheck: { kind: 'port', reason: 'corpus' },",
    `  detector: { detect: ${parts.detect ?? "async () => ({ status: 'pass', evidence: ['corpus'] })"} },`,
    `  planner: { plan: ${parts.plan ?? 'async () => CONTRIBUTION'} },`,
    parts.extra ?? '',
    '};',
  ].join('\n');
const CONTRIBUTION = JSON.stringify(webOnlyContribution(['node', 'server.js'], 8080));
const source = (text: string) => `const CONTRIBUTION = ${CONTRIBUTION};\n${text}\n`;
const module = (text: string) => ({ 'bp.mjs': source(text) });
const BP = ['--buildpack', '{case}/bp.mjs'];
const BPDIR = ['--buildpack', '{case}/bp'];
const MODULE = 'RUNPLAN_E_BUILDPACK_MODULE_INVALID';
const FAST = { RUNPLAN_BUILDPACK_TIMEOUT: '0.5', RUNPLAN_INVENTORY_TIMEOUT: '0.5' };
const NEVER = 'new Promise(() => {})';
const TIMEOUT = 'RUNPLAN_E_BUILDPACK_TIMEOUT';
const FAILED = 'RUNPLAN_E_BUILDPACK_FAILED';
const RESULT = 'RUNPLAN_E_BUILDPACK_RESULT_INVALID';

/**
 * Buildpacks of the host's (--buildpack) whose code hangs, throws or returns
 * garbage (issue 21): each call is bounded and each fault a coded error naming
 * the buildpack and the phase — never exit 0 with nothing done, never exit 70.
 */
const hostBuildpacks: CaseRow[] = [
  {
    id: 'buildpack-import-never-settles',
    command: 'build',
    hostEnv: FAST,
    outside: { 'bp.mjs': `await ${NEVER};\nexport default {};\n` },
    args: BP,
    expect: { exit: 1, code: TIMEOUT, includes: ['loading its module'] },
  },
  {
    id: 'buildpack-factory-never-settles',
    command: 'build',
    hostEnv: FAST,
    outside: { 'bp.mjs': `export default () => ${NEVER};\n` },
    args: BP,
    expect: { exit: 1, code: TIMEOUT, includes: ['its factory function'] },
  },
  {
    id: 'buildpack-detect-never-settles',
    command: 'build',
    hostEnv: FAST,
    outside: module(hostBuildpack({ detect: `() => ${NEVER}` })),
    args: BP,
    expect: { exit: 1, code: TIMEOUT, includes: ['buildpack "corpus" did not finish detect()'] },
  },
  {
    id: 'buildpack-detect-never-settles-run-json',
    command: 'raw',
    hostEnv: FAST,
    outside: module(hostBuildpack({ detect: `() => ${NEVER}` })),
    args: ['run', '{app}', '--json', ...BP, '--inventory', '{inventory}', '--cache-dir', '{case}/cache', '--work-dir', '{case}/work'],
    expect: { exit: 1, code: TIMEOUT, includes: ['"ok": false'] },
  },
  {
    id: 'buildpack-plan-never-settles',
    command: 'build',
    hostEnv: FAST,
    outside: module(hostBuildpack({ plan: `() => ${NEVER}` })),
    args: BP,
    expect: { exit: 1, code: TIMEOUT, includes: ['did not finish plan()'] },
  },
  {
    id: 'buildpack-gather-never-settles',
    command: 'raw',
    hostEnv: FAST,
    outside: module(hostBuildpack({ extra: `  inventory: { schema: { safeParse: (v) => ({ success: true, data: v }) }, gather: () => ${NEVER} },` })),
    args: ['plan', '{app}', ...BP, '--cache-dir', '{case}/cache'],
    expect: { exit: 1, code: TIMEOUT, includes: ["its inventory provider's gather()"] },
  },
  {
    id: 'buildpack-detect-throws',
    command: 'build',
    outside: module(hostBuildpack({ detect: "async () => { throw new TypeError('corpus detect failed'); }" })),
    args: BP,
    expect: { exit: 1, code: FAILED, includes: ['corpus detect failed'] },
  },
  { id: 'buildpack-detect-throws-at-once', command: 'build', outside: module(hostBuildpack({ detect: "() => { throw new Error('corpus sync'); }" })), args: BP, expect: { exit: 1, code: FAILED } },
  {
    id: 'buildpack-detect-throws-huge-string',
    outside: module(hostBuildpack({ detect: "async () => { throw 'x'.repeat(5000000); }" })),
    args: BP,
    expect: { exit: 1, code: FAILED, includes: ['more characters'] },
  },
  {
    id: 'buildpack-detect-throws-escapes',
    outside: module(hostBuildpack({ detect: `async () => { throw new Error(${JSON.stringify(`boom${FORGED}${TERMINAL_ATTACK}`)}); }` })),
    args: BP,
    expect: { exit: 1, code: FAILED, excludes: ['\n==> build succeeded'] },
  },
  { id: 'buildpack-detect-garbage', outside: module(hostBuildpack({ detect: 'async () => 42' })), args: BP, expect: { exit: 1, code: RESULT, includes: ['detect()'] } },
  { id: 'buildpack-detect-bad-status', outside: module(hostBuildpack({ detect: "async () => ({ status: 'maybe', evidence: 'x' })" })), args: BP, expect: { exit: 1, code: RESULT } },
  {
    id: 'buildpack-plan-throws',
    command: 'build',
    outside: module(hostBuildpack({ plan: "async () => { throw new RangeError('corpus plan failed'); }" })),
    args: BP,
    expect: { exit: 1, code: FAILED, includes: ['corpus plan failed'] },
  },
  { id: 'buildpack-plan-garbage', command: 'build', outside: module(hostBuildpack({ plan: 'async () => ({ runtimes: 7 })' })), args: BP, expect: { exit: 1, code: RESULT, includes: ['plan()'] } },
  { id: 'buildpack-plan-null', outside: module(hostBuildpack({ plan: 'async () => null' })), args: BP, expect: { exit: 1, code: RESULT } },
  {
    id: 'buildpack-plan-step-name-newline',
    command: 'build',
    outside: module(
      hostBuildpack({
        plan: `async () => ({ ...CONTRIBUTION, steps: [{ name: ${JSON.stringify(`x${FORGED}`)}, description: 'x', run: { kind: 'exec', argv: ['true'] }, cwd: '.', env: {}, pathPrepend: [], layer: null }] })`,
      }),
    ),
    args: BP,
    expect: { exit: 1, code: RESULT, excludes: ['\n==> build succeeded'] },
  },
  {
    id: 'buildpack-plan-cwd-climbs',
    command: 'build',
    outside: module(
      hostBuildpack({
        plan: "async () => ({ ...CONTRIBUTION, steps: [{ name: 'x', description: 'x', run: { kind: 'exec', argv: ['true'] }, cwd: '../..', env: {}, pathPrepend: [], layer: null }] })",
      }),
    ),
    args: BP,
    expect: { exit: 1, code: RESULT, excludes: ['[x]'] },
  },
  // --buildpack naming a directory: it is loaded as a package, by its package.json, or refused naming what is wrong.
  {
    id: 'buildpack-directory-without-package-json',
    outside: { bp: { dir: { 'index.mjs': source(hostBuildpack({})) } } },
    args: BPDIR,
    expect: { exit: 2, code: MODULE, includes: ['without a readable package.json'] },
  },
  {
    id: 'buildpack-directory-package-json-garbage',
    outside: { bp: { dir: { 'package.json': '{"exports": ', 'index.mjs': source(hostBuildpack({})) } } },
    args: BPDIR,
    expect: { exit: 2, code: MODULE, includes: ['not JSON'] },
  },
  { id: 'buildpack-directory-package-json-array', outside: { bp: { dir: { 'package.json': '[]' } } }, args: BPDIR, expect: { exit: 2, code: MODULE, includes: ['not a JSON object'] } },
  {
    id: 'buildpack-directory-exports-climb',
    outside: { bp: { dir: { 'package.json': '{"exports": "../bp.mjs"}' } }, ...module(hostBuildpack({})) },
    args: BPDIR,
    expect: { exit: 2, code: MODULE, includes: ['not a "./" path inside the package'] },
  },
  {
    id: 'buildpack-directory-exports-require-only',
    outside: { bp: { dir: { 'package.json': '{"exports": {"require": "./index.cjs"}}', 'index.cjs': 'module.exports = {};' } } },
    args: BPDIR,
    expect: { exit: 2, code: MODULE, includes: ['no "." entry for import'] },
  },
  { id: 'buildpack-directory-main-missing', outside: { bp: { dir: { 'package.json': '{"main": "lib/nowhere"}' } } }, args: BPDIR, expect: { exit: 2, code: MODULE, includes: ['names no module'] } },
  { id: 'buildpack-timeout-garbage', args: ['--buildpack-timeout', 'soon'], expect: { exit: 2, code: USAGE } },
  { id: 'buildpack-timeout-on-diff', command: 'raw', args: ['diff', '{plan}', '{plan}', '--buildpack-timeout', '5'], plan: (p) => p, expect: { exit: 2, code: USAGE } },
  { id: 'buildpack-timeout-env-garbage', hostEnv: { RUNPLAN_BUILDPACK_TIMEOUT: 'never' }, expect: { exit: 2, code: HOST } },
  { id: 'inventory-timeout-env-zero', hostEnv: { RUNPLAN_INVENTORY_TIMEOUT: '0' }, expect: { exit: 2, code: HOST } },
];

const corpusPublicKey = standInPublicKey(0x2c);
/** An OpenSSH private key of the right shape, encrypted with `cipher` ("none": readable when planning; ssh-keygen still refuses its made-up private part). */
const corpusSshKey = (cipher: string) => standInSshKey(0x2c, cipher);
const SSH_KEY = corpusSshKey('none');
/** Each line of the key's data: none may be shown. */
const sshKeyLines = (key: string) => key.split('\n').filter((l) => l.length >= 8 && !l.startsWith('-----'));
const keyFile = (key: string) => ({ 'key.env': `CC_SSH_PRIVATE_KEY="${key}"\n` });
const withKey = { outside: keyFile(SSH_KEY), secrets: sshKeyLines(SSH_KEY) };
const KEY_INVALID = 'RUNPLAN_E_SSH_KEY_INVALID';
const KNOWN_HOSTS_INVALID = 'RUNPLAN_E_SSH_KNOWN_HOSTS_INVALID';
const gitSshDependency = {
  'package.json': `${JSON.stringify({ name: 'corpus-app', scripts: { start: 'node server.js' }, dependencies: { 'private-dep': 'git+ssh://git@git.example.org/team/private-dep.git' } })}\n`,
};

/** The private SSH key of the build (CC_SSH_PRIVATE_KEY), its known hosts, and the host's known hosts file. */
const sshKeys: CaseRow[] = [
  { id: 'ssh-key-valid', command: 'plan-json', ...withKey, args: ['--app-env-file', '{case}/key.env'], expect: { exit: 0, code: 'RUNPLAN_W_SSH_TRUST_ON_FIRST_USE' } },
  {
    id: 'ssh-key-one-line-escaped',
    ...withKey,
    outside: { 'key.env': `CC_SSH_PRIVATE_KEY=${SSH_KEY.trim().replace(/\n/g, '\\n')}\n` },
    args: ['--app-env-file', '{case}/key.env'],
    expect: { exit: 0, code: 'RUNPLAN_W_SSH_TRUST_ON_FIRST_USE', includes: ['given on one line with'] },
  },
  { id: 'ssh-key-public-key', env: { CC_SSH_PRIVATE_KEY: `ssh-ed25519 ${corpusPublicKey.toString('base64')} corpus` }, expect: { exit: 2, code: KEY_INVALID, includes: ['holds a public key'] } },
  {
    id: 'ssh-key-passphrase',
    outside: keyFile(corpusSshKey('aes256-ctr')),
    secrets: sshKeyLines(corpusSshKey('aes256-ctr')),
    args: ['--app-env-file', '{case}/key.env'],
    expect: { exit: 2, code: KEY_INVALID, includes: ['protected by a passphrase'] },
  },
  { id: 'ssh-key-garbage', env: { CC_SSH_PRIVATE_KEY: `corpus_ssh_garbage_4e${TERMINAL_ATTACK}` }, secrets: ['corpus_ssh_garbage_4e'], expect: { exit: 2, code: KEY_INVALID } },
  {
    id: 'ssh-key-truncated',
    outside: keyFile(SSH_KEY.split('\n').slice(0, 3).join('\n')),
    secrets: sshKeyLines(SSH_KEY).slice(0, 2),
    args: ['--app-env-file', '{case}/key.env'],
    expect: { exit: 2, code: KEY_INVALID, includes: ['no -----END OPENSSH PRIVATE KEY----- line'] },
  },
  {
    id: 'ssh-key-huge',
    outside: { 'key.env': () => `CC_SSH_PRIVATE_KEY=${'corpus_ssh_huge_'.repeat(65_536)}\n` },
    args: ['--app-env-file', '{case}/key.env'],
    secrets: ['corpus_ssh_huge_'],
    expect: { exit: 2, code: KEY_INVALID },
  },
  {
    id: 'ssh-key-nul',
    outside: { 'key.env': 'CC_SSH_PRIVATE_KEY=corpus_ssh_nul_31\u0000x\n' },
    args: ['--app-env-file', '{case}/key.env'],
    secrets: ['corpus_ssh_nul_31'],
    expect: { exit: 2, code: 'RUNPLAN_E_ENV_VALUE_INVALID' },
  },
  { id: 'ssh-key-empty', env: { CC_SSH_PRIVATE_KEY: '' }, expect: { exit: 0 } },
  {
    id: 'ssh-key-from-addon',
    ...withKey,
    outside: { 'key.env': `CC_SSH_PRIVATE_KEY="${SSH_KEY}"\n` },
    args: ['--addon-env-file', 'keys={case}/key.env'],
    expect: { exit: 0, code: 'RUNPLAN_W_SSH_TRUST_ON_FIRST_USE', includes: ['env CC_SSH_PRIVATE_KEY (addon)'] },
  },
  {
    id: 'ssh-known-hosts-garbage',
    ...withKey,
    env: { CC_SSH_KNOWN_HOSTS: `not a host line${TERMINAL_ATTACK}` },
    args: ['--app-env-file', '{case}/key.env'],
    expect: { exit: 2, code: KNOWN_HOSTS_INVALID, includes: ['line 1 of CC_SSH_KNOWN_HOSTS'] },
  },
  {
    id: 'ssh-known-hosts-huge',
    ...withKey,
    outside: { ...keyFile(SSH_KEY), 'hosts.env': () => `CC_SSH_KNOWN_HOSTS=${'h ssh-rsa AAAA '.repeat(70_000)}\n` },
    args: ['--app-env-file', '{case}/key.env', '--app-env-file', '{case}/hosts.env'],
    expect: { exit: 2, code: KNOWN_HOSTS_INVALID },
  },
  {
    id: 'ssh-known-hosts-valid',
    ...withKey,
    env: { CC_SSH_KNOWN_HOSTS: `[127.0.0.1]:2222 ssh-ed25519 ${corpusPublicKey.toString('base64')}` },
    args: ['--app-env-file', '{case}/key.env'],
    expect: { exit: 0, includes: ['checked strictly against CC_SSH_KNOWN_HOSTS'] },
  },
  { id: 'ssh-known-hosts-option-empty', args: ['--ssh-known-hosts', ''], expect: { exit: 2, code: USAGE } },
  { id: 'ssh-known-hosts-option-other-command', command: 'raw', args: ['check', 'http://127.0.0.1:1', '--ssh-known-hosts', '{case}/k'], expect: { exit: 2, code: USAGE } },
  {
    id: 'ssh-known-hosts-file-missing',
    command: 'build',
    ...withKey,
    hostEnv: { RUNPLAN_SSH_KNOWN_HOSTS: '{case}/missing' },
    args: ['--app-env-file', '{case}/key.env'],
    expect: { exit: 2, code: HOST, includes: ['cannot read the SSH known hosts file'] },
  },
  {
    id: 'ssh-known-hosts-file-host-file',
    command: 'build',
    ...withKey,
    args: ['--app-env-file', '{case}/key.env', '--ssh-known-hosts', '{sentinel}/host-file'],
    expect: { exit: 2, code: HOST, includes: ['is not a known_hosts entry'] },
  },
  {
    id: 'ssh-key-unreadable-by-ssh-keygen',
    command: 'build',
    ...withKey,
    args: ['--app-env-file', '{case}/key.env'],
    expect: { exit: 2, code: KEY_INVALID, includes: ['ssh-keygen cannot read the key of CC_SSH_PRIVATE_KEY'] },
  },
  { id: 'ssh-dependency-without-key', files: gitSshDependency, expect: { exit: 0, code: 'RUNPLAN_W_SSH_KEY_MISSING', includes: ['private-dep (package.json)'] } },
  {
    id: 'ssh-dependency-hostile-url',
    files: {
      'package.json': `${JSON.stringify({ name: 'corpus-app', scripts: { start: 'node server.js' }, dependencies: { a: `git+ssh://git@h${TERMINAL_ATTACK}/x.git`, b: `git@h:${'x'.repeat(100_000)}` } })}\n`,
    },
    expect: { exit: 0 },
  },
  {
    id: 'ssh-key-image-unsupported',
    command: 'raw',
    ...withKey,
    hostEnv: { DOCKER_HOST: 'unix://{case}/no-docker.sock' },
    args: ['image', '{app}', '--inventory', '{inventory}', '--work-dir', '{case}/work', '--app-env-file', '{case}/key.env'],
    expect: { exit: 2, code: 'RUNPLAN_E_IMAGE_SSH_KEY_UNSUPPORTED' },
  },
];

export const coreCases: BadInputCase[] = inArea('core', 'node', [...options, ...envFiles, ...coreVariables, ...savedFiles, ...savedPlanChecks, ...hostBuildpacks, ...sshKeys]);
