import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRubyBuildpack } from '../../buildpacks/ruby/index.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { formatPlan } from '../../src/cli/format-plan.js';
import { diffPlans } from '../../src/plan/diff.js';
import type { BuildStep, PlannedProcess, RunPlan } from '../../src/plan/schema.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { planToCarryOut } from '../../src/planning/plan-to-carry-out.js';
import { hostStackBindings, stackPlaceholdersOf } from '../../src/planning/stack-bindings.js';
import { ROOT } from '../helpers/cli.js';
import { testInventory, testRegistry } from '../helpers/inventory.js';

/**
 * A plan carries out the same on any host (docs/plan.md, "Programs of the
 * stack"): what an executor acts on — commands, PATH, working directories,
 * variables, files, sockets, layers — holds no directory of the machine that
 * made it, only names and placeholders (${APP_HOME}, ${RUN_DIR}, ${RUBY_BIN}…).
 * Where a runtime was found is told in the explanations (decisions, a runtime's
 * distribution, a layer's key inputs), which this test leaves alone.
 */
const GOLDEN = join(ROOT, 'test', 'golden');

/**
 * A directory of a machine, written anywhere in a value: /usr/…, /opt/…, /home/…
 * (not a URL path such as /health, nor the devices every POSIX system has, such
 * as /dev/null).
 */
const HOST_DIRECTORY =
  /(?<![\w.}$:/@~-])\/(?!dev\/(?:null|stdin|stdout|stderr)\b)(?:usr|bin|sbin|etc|opt|var|home|root|tmp|lib|lib32|lib64|libx32|srv|nix|snap|run|proc|sys|dev|mnt|media|boot|Users|private|Library|System|Applications)(?=\/|\b)/;

interface Found {
  readonly where: string;
  readonly value: string;
}

/** `value` is a path an executor uses as is: absolute unless it starts with a placeholder. */
function pathValue(where: string, value: string, found: Found[]): void {
  if (value.startsWith('/') || HOST_DIRECTORY.test(value)) found.push({ where, value });
}

/** `value` is text (a script, a file's content, an argument): no directory of a machine in it. */
function textValue(where: string, value: string, found: Found[]): void {
  if (HOST_DIRECTORY.test(value)) found.push({ where, value });
}

function commandOf(where: string, step: Pick<BuildStep, 'cwd' | 'env' | 'pathPrepend'> & { run?: BuildStep['run']; command?: PlannedProcess['command'] }, found: Found[]): void {
  const run = step.run ?? step.command;
  if (run?.kind === 'exec') for (const [i, a] of run.argv.entries()) (i === 0 ? pathValue : textValue)(`${where} argv[${i}]`, a, found);
  if (run?.kind === 'shell') textValue(`${where} script`, run.script, found);
  if (run?.kind === 'install') {
    pathValue(`${where} target`, run.target, found);
    for (const link of run.links) pathValue(`${where} link`, link.path, found);
  }
  pathValue(`${where} cwd`, step.cwd, found);
  for (const [name, value] of Object.entries(step.env)) textValue(`${where} env ${name}`, value, found);
  for (const [i, p] of step.pathPrepend.entries()) pathValue(`${where} pathPrepend[${i}]`, p, found);
}

/** Every host path in what an executor acts on. */
function hostPaths(plan: RunPlan): Found[] {
  const found: Found[] = [];
  const steps = [...plan.build.steps, ...(plan.runHooks?.preRun ?? []), ...(plan.runHooks?.succeeded ?? []), ...(plan.runHooks?.failed ?? [])];
  for (const step of steps) commandOf(`step ${step.name}`, step, found);
  for (const proc of plan.processes) {
    commandOf(`process ${proc.name}`, proc, found);
    for (const r of proc.startAfter ?? []) if (r.kind !== 'tcp-port') pathValue(`process ${proc.name} startAfter`, r.socket, found);
  }
  for (const file of plan.files) {
    pathValue(`file ${file.path}`, file.path, found);
    for (const chunk of file.content) if ('text' in chunk) textValue(`file ${file.path}`, chunk.text, found);
  }
  for (const layer of plan.layers) pathValue(`layer ${layer.name}`, layer.path, found);
  // The application's and add-ons' own values are the deployment's input, not the plan's choice.
  for (const v of plan.environment.variables) if (v.value !== undefined && (v.source === 'service' || v.source === 'buildpack-default')) textValue(`variable ${v.name}`, v.value, found);
  return found;
}

function goldenPlans(): { name: string; plan: RunPlan }[] {
  const plans: { name: string; plan: RunPlan }[] = [];
  for (const type of readdirSync(GOLDEN, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const file of readdirSync(join(GOLDEN, type.name)).filter((f) => f.endsWith('.json'))) {
      const json = JSON.parse(readFileSync(join(GOLDEN, type.name, file), 'utf8')) as RunPlan | { exitCode: number };
      // A refused plan holds its error instead.
      if ('schemaVersion' in json) plans.push({ name: `${type.name}/${file}`, plan: json });
    }
  }
  return plans;
}

describe('plan portability', () => {
  const plans = goldenPlans();

  it('reads the golden plans of every type', () => {
    expect(new Set(plans.map((p) => p.name.split('/')[0]))).toEqual(new Set(['node', 'play1', 'ruby']));
  });

  it('finds no directory of the planning machine in what a golden plan carries out', () => {
    const offending = plans.flatMap(({ name, plan }) => hostPaths(plan).map((f) => `${name}: ${f.where}: ${f.value.slice(0, 120)}`));
    expect(offending).toEqual([]);
  });

  it('records in every golden plan the instance it was sized for', () => {
    expect(plans.filter(({ plan }) => plan.instance === undefined).map((p) => p.name)).toEqual([]);
  });

  it('tells a host path in a command, PATH, a file, a socket or a variable, and leaves placeholders and URL paths alone', () => {
    const step = (over: Partial<BuildStep>): BuildStep => ({ name: 's', description: 'd', run: { kind: 'exec', argv: ['nginx'] }, cwd: '.', env: {}, pathPrepend: [], layer: null, ...over });
    const plan = (steps: BuildStep[], more: Partial<RunPlan> = {}) => ({ build: { steps }, processes: [], files: [], layers: [], environment: { variables: [] }, ...more }) as unknown as RunPlan;
    const found = (p: RunPlan) => hostPaths(p).map((f) => f.where);
    expect(found(plan([step({ run: { kind: 'exec', argv: ['/usr/sbin/nginx', '-c', '${APP_HOME}/nginx.conf'] }, pathPrepend: ['.runplan/bin', '${RUBY_BIN}'] })]))).toEqual(['step s argv[0]']);
    expect(found(plan([step({ pathPrepend: ['/opt/rubies/3.3/bin'], env: { GEM_PATH: '/var/lib/gems/3.1.0' } })]))).toEqual(['step s env GEM_PATH', 'step s pathPrepend[0]']);
    expect(found(plan([step({ run: { kind: 'shell', script: 'curl http://x/health && /usr/bin/env true' } })]))).toEqual(['step s script']);
    expect(found(plan([step({ run: { kind: 'exec', argv: ['sh', '-c', 'realpath "$1" 2>/dev/null'] } })]))).toEqual([]);
    const conf = { path: 'nginx.conf', phase: 'build', mode: 0o644, secret: false, reason: 'r' } as const;
    expect(found(plan([], { files: [{ ...conf, content: [{ text: 'location /static/ { alias "' }, { placeholder: 'APP_HOME' }, { text: '/public/"; }' }] }] }))).toEqual([]);
    expect(found(plan([], { files: [{ ...conf, content: [{ text: 'include /etc/nginx/mime.types;' }] }] }))).toEqual(['file nginx.conf']);
  });
});

const RUBY_APP = {
  Gemfile: "ruby '3.1.2'\ngem 'puma'\n",
  'Gemfile.lock': 'GEM\n  specs:\n    puma (5.6.5)\n\nDEPENDENCIES\n  puma\n\nRUBY VERSION\n   ruby 3.1.2p20\n',
  'config.ru': 'run ->(e) { [200, {}, []] }\n',
};
const planned = (files: Record<string, string>, host: { instance?: { cpus: number; memoryMb: number } } = {}) =>
  createPlan({ registry: testRegistry(), inventory: testInventory(), files: new MemorySource(files), appDir: '/srv/app', host: { port: 8080, ...host } });

describe("the programs of the stack, found on this host's", () => {
  it("fills only the stack placeholders a plan uses, from this host's inventory (a Node.js plan uses none)", async () => {
    const { plan } = await planned(RUBY_APP);
    expect(stackPlaceholdersOf(plan)).toEqual(['RUBY_BIN', 'NGINX_BIN']);
    const here = testInventory({ ruby: { rubies: [{ version: '3.1.2', bindir: '/opt/rubies/3.1.2/bin', origin: 'o' }], nginx: '/usr/local/sbin/nginx' } });
    expect(await hostStackBindings(plan, { registry: testRegistry(), inventory: here })).toEqual({ RUBY_BIN: '/opt/rubies/3.1.2/bin', NGINX_BIN: '/usr/local/sbin' });
    const { plan: node } = await planned({ 'package.json': '{"scripts":{"start":"node x.js"}}', 'package-lock.json': '{"lockfileVersion":3}' });
    expect(await hostStackBindings(node, { registry: new BuildpackRegistry() })).toEqual({});
  });

  it('refuses a plan whose programs no registered buildpack can find here, or whose buildpack gives no directory', async () => {
    const { plan } = await planned(RUBY_APP);
    await expect(hostStackBindings(plan, { registry: new BuildpackRegistry(), inventory: testInventory() })).rejects.toMatchObject({
      code: CoreErrors.PLAN_STACK_UNRESOLVED.code,
      message: expect.stringContaining('the plan uses ${RUBY_BIN}, ${NGINX_BIN}, and no buildpack of type "ruby" is registered'),
    });
    const ruby = createRubyBuildpack();
    const broken = new BuildpackRegistry([{ ...ruby, stack: () => ({ RUBY_BIN: 'bin', NGINX_BIN: '/usr/sbin' }) }]);
    await expect(hostStackBindings(plan, { registry: broken, inventory: testInventory() })).rejects.toMatchObject({
      code: CoreErrors.PLAN_STACK_UNRESOLVED.code,
      message: expect.stringContaining('gives ${RUBY_BIN} "bin", not an absolute directory of this host'),
    });
  });
});

describe('the instance a plan was sized for', () => {
  it('is recorded with its source: the host settings, else the size the inventory recorded', async () => {
    const { plan } = await planned(RUBY_APP);
    expect(plan.instance).toMatchObject({ cpus: 2, memoryMb: 2048, decision: { id: 'instance', source: 'default', resolved: '2 CPUs, 2048 MiB' } });
    const { plan: declared } = await planned(RUBY_APP, { instance: { cpus: 1, memoryMb: 512 } });
    expect(declared.instance).toMatchObject({ cpus: 1, memoryMb: 512, decision: { source: 'host settings', requested: '1 CPU, 512 MiB' } });
  });

  it('is shown with the plan, and a change of it is a change of the plan, with why', async () => {
    const { plan: before } = await planned(RUBY_APP);
    const { plan: after } = await planned(RUBY_APP, { instance: { cpus: 1, memoryMb: 512 } });
    expect(formatPlan(after)).toContain('Instance (the plan is sized for it)\n  1 CPU, 512 MiB\n');
    expect(diffPlans(before, after)).toContainEqual(
      expect.objectContaining({
        area: 'decision',
        subject: 'instance',
        change: 'changed',
        before: '2 CPUs, 2048 MiB',
        after: '1 CPU, 512 MiB',
        why: expect.stringContaining('host settings: the host declares it'),
      }),
    );
  });

  it('is the instance a saved plan is carried out on; another one declared is refused', async () => {
    const { plan } = await planned(RUBY_APP, { instance: { cpus: 1, memoryMb: 512 } });
    const carry = (instance?: { cpus: number; memoryMb: number }) => planToCarryOut({ registry: testRegistry(), files: new MemorySource(RUBY_APP), plan, host: instance ? { instance } : {} });
    expect((await carry()).host.instance).toEqual({ cpus: 1, memoryMb: 512 });
    expect((await carry({ cpus: 1, memoryMb: 512 })).host.instance).toEqual({ cpus: 1, memoryMb: 512 });
    await expect(carry({ cpus: 4, memoryMb: 512 })).rejects.toMatchObject({
      code: CoreErrors.HOST_INVALID_SETTING.code,
      message: expect.stringContaining('the plan was sized for an instance of 1 CPU, 512 MiB (declared by the host that planned it), not 4 CPUs, 512 MiB'),
    });
    // A plan made before plans recorded it: the host's, as before.
    const { instance: _, ...older } = plan;
    expect((await planToCarryOut({ registry: testRegistry(), plan: older, host: { instance: { cpus: 4, memoryMb: 4096 } } })).host.instance).toEqual({ cpus: 4, memoryMb: 4096 });
  });
});
