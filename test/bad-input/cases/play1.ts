import { type BadInputCase, big, binary, type CaseRow, inArea, TERMINAL_ATTACK } from '../corpus.js';

const VERSION_INVALID = 'RUNPLAN_E_PLAY1_VERSION_INVALID';
const CONF_INVALID = 'RUNPLAN_E_PLAY1_CONF_INVALID';
const conf = (body: string) => `application.name=corpus\n%platform.XForwardedSupport=all\n${body}`;

/** platform/play1_version and PLAY1_VERSION. */
const version: CaseRow[] = [
  { id: 'version-file-garbage', files: { 'platform/play1_version': 'one point nine\n' }, expect: { exit: 2, code: VERSION_INVALID } },
  { id: 'version-file-empty', files: { 'platform/play1_version': '' }, expect: { exit: 0 } },
  { id: 'version-file-escapes', files: { 'platform/play1_version': `${TERMINAL_ATTACK}\n` }, expect: { exit: 2, code: VERSION_INVALID } },
  { id: 'version-file-multiline', files: { 'platform/play1_version': '1.9\n1.2\nextra\n' }, expect: { exit: 2, code: VERSION_INVALID } },
  { id: 'version-file-crlf', files: { 'platform/play1_version': '1.9\r\n' }, expect: { exit: 0 } },
  { id: 'version-file-bom', files: { 'platform/play1_version': '\ufeff1.9\n' }, expect: { exit: 0 } },
  { id: 'version-file-binary', files: { 'platform/play1_version': binary(100_000) }, expect: { exit: 2, code: VERSION_INVALID } },
  { id: 'version-file-huge', files: { 'platform/play1_version': binary(5_000_000) }, expect: { exit: 2, code: 'RUNPLAN_E_APP_FILE_TOO_LARGE' } },
  { id: 'version-file-long-line', files: { 'platform/play1_version': big('1.9', 1_000_000) }, expect: { exit: 2, code: VERSION_INVALID } },
  {
    id: 'version-file-directory',
    files: { 'platform/play1_version': { dir: true } },
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FILE_NOT_REGULAR' },
  },
  { id: 'version-file-too-old', files: { 'platform/play1_version': '1.0\n' }, expect: { exit: 2, code: VERSION_INVALID } },
  { id: 'version-file-python2-series', files: { 'platform/play1_version': '1.5\n' }, expect: { exit: 1, code: 'RUNPLAN_E_PLAY1_PYTHON_MISSING' } },
  { id: 'play1-version-garbage', env: { PLAY1_VERSION: 'latest' }, expect: { exit: 2, code: VERSION_INVALID } },
  { id: 'play1-version-escapes', env: { PLAY1_VERSION: TERMINAL_ATTACK }, expect: { exit: 2, code: VERSION_INVALID } },
  { id: 'play1-version-huge', env: { PLAY1_VERSION: '1'.repeat(100_000) }, expect: { exit: 2, code: VERSION_INVALID } },
  { id: 'play1-version-empty-falls-back', env: { PLAY1_VERSION: '' }, expect: { exit: 0 } },
  { id: 'play1-version-no-file', files: { 'platform/play1_version': null }, expect: { exit: 0 } },
  { id: 'play1-default-version-garbage', files: { 'platform/play1_version': null }, hostEnv: { RUNPLAN_PLAY1_DEFAULT_VERSION: 'abc' }, expect: { exit: 2, code: VERSION_INVALID } },
  { id: 'play1-mirror-garbage', command: 'raw', args: ['plan', '{app}'], hostEnv: { RUNPLAN_PLAY1_MIRROR: 'not a url' }, expect: { exit: 2, code: 'RUNPLAN_E_PLAY1_MIRROR_INVALID' } },
  { id: 'play1-checksums-garbage', command: 'raw', args: ['plan', '{app}'], hostEnv: { RUNPLAN_PLAY1_CHECKSUMS: '1.9.0=nothex' }, expect: { exit: 2, code: 'RUNPLAN_E_PLAY1_CHECKSUMS_INVALID' } },
];

/** conf/application.conf, conf/routes and the other files of a Play application. */
const files: CaseRow[] = [
  { id: 'routes-missing', files: { 'conf/routes': null }, expect: { exit: 2, code: 'RUNPLAN_E_PLAY1_ROUTES_MISSING' } },
  { id: 'routes-directory', files: { 'conf/routes': { dir: true } }, expect: { exit: 0 } },
  { id: 'routes-binary', files: { 'conf/routes': binary(10_000) }, expect: { exit: 0 } },
  { id: 'conf-empty', files: { 'conf/application.conf': '' }, expect: { exit: 0, code: 'RUNPLAN_W_PLAY1_XFORWARDED_SUPPORT' } },
  { id: 'conf-binary', files: { 'conf/application.conf': binary(100_000) }, expect: { exit: 2, code: CONF_INVALID } },
  { id: 'conf-escapes-in-key', files: { 'conf/application.conf': conf(`${TERMINAL_ATTACK}=1\n`) }, expect: { exit: 0 } },
  { id: 'conf-undefined-reference', files: { 'conf/application.conf': conf('db.url=${CORPUS_UNDEFINED}\n') }, expect: { exit: 0, code: 'RUNPLAN_W_PLAY1_UNDEFINED_REFERENCE' } },
  { id: 'conf-reference-escapes', files: { 'conf/application.conf': conf(`db.url=\${${TERMINAL_ATTACK}}\n`) }, expect: { exit: 0 } },
  {
    id: 'conf-dollar-in-secret-value',
    files: { 'conf/application.conf': conf('db.pass=${DB_PASS}\n') },
    env: { DB_PASS: 'corpus$dollar_pw_2c' },
    secrets: ['dollar_pw_2c'],
    expect: { exit: 0, code: 'RUNPLAN_W_PLAY1_DOLLAR_IN_VALUE' },
  },
  { id: 'conf-dev-mode', files: { 'conf/application.conf': conf('%platform.application.mode=dev\n') }, expect: { exit: 0, code: 'RUNPLAN_W_PLAY1_DEV_MODE' } },
  { id: 'conf-jvm-memory-garbage', files: { 'conf/application.conf': conf('jvm.memory=-Xmx$(reboot)\n') }, expect: { exit: 0 } },
  { id: 'conf-jvm-memory-agent', files: { 'conf/application.conf': conf('jvm.memory=-javaagent:/tmp/evil.jar\n') }, expect: { exit: 0 } },
  { id: 'conf-http-port-garbage', files: { 'conf/application.conf': conf('http.port=abc\n') }, expect: { exit: 0 } },
  { id: 'conf-huge-line', files: { 'conf/application.conf': () => conf(`x=${'a'.repeat(3_000_000)}\n`) }, expect: { exit: 0 } },
  {
    id: 'conf-many-keys',
    files: { 'conf/application.conf': () => conf(Array.from({ length: 100_000 }, (_, i) => `k${i}=\${K${i}}`).join('\n')) },
    expect: { exit: 0, code: 'RUNPLAN_W_PLAY1_UNDEFINED_REFERENCE' },
  },
  { id: 'conf-continuation-at-eof', files: { 'conf/application.conf': conf('a=b\\') }, expect: { exit: 0 } },
  { id: 'conf-nul', files: { 'conf/application.conf': conf('a=b\u0000c\n') }, expect: { exit: 0 } },
  {
    id: 'conf-directory',
    files: { 'conf/application.conf': { dir: true } },
    expect: { exit: 2, code: 'RUNPLAN_E_APP_FILE_NOT_REGULAR' },
  },
  { id: 'java-home-garbage', env: { JAVA_HOME: 'relative/path' }, expect: { exit: 0 } },
  { id: 'java-home-escapes', env: { JAVA_HOME: `/opt/${TERMINAL_ATTACK}` }, expect: { exit: 0 } },
  { id: 'sbt-project', files: { 'build.sbt': 'name := "x"\n' }, expect: { exit: 2, code: 'RUNPLAN_E_DETECT_NO_MATCH' } },
  { id: 'project-directory-is-file', files: { project: 'not a directory' }, expect: { exit: 0 } },
];

export const play1Cases: BadInputCase[] = inArea('play1', 'play1', [...version, ...files]);
