import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { DockerCli } from '../../src/engines/docker-cli.js';
import type { PodmanCli } from '../../src/engines/podman-cli.js';
import { PodmanKubeExecutor } from '../../src/engines/podman-kube.js';
import { defaultRegistry } from '../../src/compose/default-registry.js';
import type { RunplanError } from '../../src/errors/runplan-error.js';
import { deploy } from '../../src/executor/deploy-flow.js';
import { HEALTH_CLOSING_LINE } from '../../src/executor/http-health-checker.js';
import type { LogLine } from '../../src/log/logger.js';
import { parseInventory } from '../../src/planning/gather-inventory.js';
import { planToCarryOut } from '../../src/planning/plan-to-carry-out.js';
import { renderHealthcheck } from '../../src/engines/image/scripts.js';
import { ANNOTATIONS, type K8sObject } from '../../src/engines/kubernetes.js';
import { kubernetesManifests } from '../../src/engines/entries/kubernetes.js';
import { processGroups } from '../../src/lowering/process-groups.js';
import { planDigest } from '../../src/plan/digest.js';
import { parsePlan } from '../../src/planning/create-plan.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { ROOT, runCli, startCli } from '../helpers/cli.js';
import { get } from '../helpers/http.js';
import { FieldChecker } from '../helpers/k8s-fields.js';
import { podmanAvailable, startPodman } from '../helpers/podman.js';
import { freePort } from '../helpers/ports.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';

/**
 * `runplan k8s`: manifests of the three application types, checked offline
 * (kubernetes-models' schemas, plus a check that no field is unknown to the
 * API), and the Node.js Deployment run for real with `podman kube play`. No API
 * server exists here: the test against a cluster is test/cluster/ (npm run test:cluster).
 */
const GOLDEN = join(ROOT, 'test', 'golden');
const INVENTORY = join(GOLDEN, 'inventory.json');
const fixture = (path: string) => join(ROOT, 'fixtures', path);
const golden = async (name: string): Promise<RunPlan> => parsePlan(JSON.parse(await readFile(join(GOLDEN, `${name}.json`), 'utf8')));
/** What golden-plans.test.ts plans with: no default taken from this machine. */
const HOST_ENV = { RUNPLAN_RUBY_DEFAULT_SERIES: '', RUNPLAN_RUBY_GEM_SOURCE: 'local', RUNPLAN_PLAY1_DEFAULT_VERSION: '' };
const SECRET = 'rails-secret-key-base-for-k8s-5d1e07aa';

interface Written {
  readonly code: number | null;
  readonly output: string;
  readonly files: Record<string, { object: K8sObject; text: string; mode: number }>;
}

/** `runplan k8s … --out <new dir>`, and what it wrote. */
async function k8s(args: readonly string[], env: Record<string, string> = {}, out?: string): Promise<Written & { out: string }> {
  const dir = out ?? (await tempDir('rp-k8s-'));
  const result = await runCli(['k8s', ...args, '--out', dir], { ...HOST_ENV, ...env });
  const files: Written['files'] = {};
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const text = await readFile(join(dir, name), 'utf8');
    files[name] = { object: parse(text) as K8sObject, text, mode: (await stat(join(dir, name))).mode & 0o777 };
  }
  return { code: result.code, output: result.output, files, out: dir };
}

type Container = {
  name: string;
  args: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  volumeMounts: { name: string; mountPath: string }[];
  resources: unknown;
};
type Probe = { exec: { command: string[] }; periodSeconds: number; failureThreshold: number; timeoutSeconds: number };
type PodTemplate = { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { containers: Container[]; volumes: { name: string; emptyDir?: object }[] } };
const template = (d: K8sObject) => (d.spec as { template: PodTemplate }).template;
const containers = (d: K8sObject) => template(d).spec.containers;

let fields: FieldChecker;
beforeAll(() => {
  fields = new FieldChecker();
});

/** kubernetes-models' validation (types, required fields, formats) and the strict field check. */
function expectValid(object: K8sObject): void {
  const Model = { Deployment, Service, Secret }[object.kind as 'Deployment' | 'Service' | 'Secret'];
  expect(Model, object.kind).toBeDefined();
  expect(() => new Model(object as never).validate()).not.toThrow();
  expect(fields.unknownFields(object)).toEqual([]);
}

describe('kubernetes manifests', () => {
  const cases = [
    { name: 'node/express', args: [fixture('node/express'), '--inventory', INVENTORY], paths: [] as string[], groups: { web: ['web'] } },
    { name: 'play1/health-root', args: [fixture('play1/health-root'), '--inventory', INVENTORY], paths: ['/'], groups: { web: ['web'] } },
    // Ruby fixtures are templates (Gemfile naming this machine's Ruby, a lock file made on it): their golden plan is the one made from the golden inventory.
    {
      name: 'ruby/rails-puma-config',
      args: [fixture('ruby/rails-puma-config'), '--plan', join(GOLDEN, 'ruby/rails-puma-config.json'), '--env', `SECRET_KEY_BASE=${SECRET}`],
      paths: ['/health'],
      groups: { web: ['puma', 'web'] },
    },
    {
      name: 'ruby/rails-sidekiq',
      args: [fixture('ruby/rails-sidekiq'), '--plan', join(GOLDEN, 'ruby/rails-sidekiq.json'), '--env', `SECRET_KEY_BASE=${SECRET}`],
      paths: [],
      groups: { web: ['puma', 'web'], sidekiq: ['sidekiq'] },
    },
  ];

  describe.concurrent.each(cases)('$name', ({ name, args, paths, groups }) => {
    it('validates, carries the plan, its health-check paths and its process groups', async () => {
      const written = await k8s([...args, '--image', 'localhost/runplan-test/app:1']);
      expect(written.code, written.output).toBe(0);
      const digest = planDigest(await golden(name));
      const deployments = Object.entries(written.files).filter(([f]) => f.startsWith('deployment-'));
      expect(Object.fromEntries(deployments.map(([, { object }]) => [object.metadata.labels['io.runplan.process-group'], containers(object).map((c) => c.name)]))).toEqual(groups);
      for (const { object } of Object.values(written.files)) {
        expectValid(object);
        // Planned here from the golden inventory, or carried out from the golden plan: the same plan either way.
        expect(object.metadata.annotations?.[ANNOTATIONS.planDigest]).toBe(digest);
      }
      const web = written.files['deployment-web.yaml']?.object as K8sObject;
      const annotations = template(web).metadata.annotations;
      expect(JSON.parse(annotations[ANNOTATIONS.healthCheckPaths] as string)).toEqual(paths);
      const webContainer = containers(web).find((c) => c.name === 'web') as Container;
      for (const probe of [webContainer.startupProbe, webContainer.readinessProbe, webContainer.livenessProbe]) {
        expect(probe?.exec.command).toEqual(['/opt/runplan/healthcheck', ...paths]);
      }
      // Only the web process is probed; the others of its Pod share ${RUN_DIR} with it.
      for (const c of containers(web)) {
        if (c.name !== 'web') expect(c.startupProbe).toBeUndefined();
        expect(c.volumeMounts).toContainEqual({ name: 'run-dir', mountPath: '/run/runplan' });
        expect(c.args).toEqual([c.name]);
      }
      expect(template(web).spec.volumes).toEqual([{ name: 'run-dir', emptyDir: {} }]);
      expect(written.files['service.yaml']?.object.spec).toMatchObject({
        selector: (web.spec as { selector: { matchLabels: object } }).selector.matchLabels,
        ports: [{ port: 8080, targetPort: 'http' }],
      });
    });
  });

  it("gives the startup probe the plan's ready timeout, and readiness and liveness shorter budgets", async () => {
    for (const [name, readyMs] of [
      ['play1/health-root', 180_000],
      ['node/express', 60_000],
    ] as const) {
      const plan = await golden(name);
      expect(plan.healthCheck.readyTimeoutMs).toBe(readyMs);
      const [web] = kubernetesManifests(plan, { image: 'i', appName: 'a', instance: { cpus: 2, memoryMb: 2048 } }).deployments;
      const c = containers(web as K8sObject)[0] as Container;
      const budget = (p: Probe | undefined) => (p as Probe).periodSeconds * (p as Probe).failureThreshold;
      expect(budget(c.startupProbe)).toBeGreaterThanOrEqual(readyMs / 1000);
      expect(budget(c.startupProbe)).toBeLessThan(readyMs / 1000 + 5);
      expect(budget(c.readinessProbe)).toBeLessThan(budget(c.livenessProbe));
      expect(budget(c.livenessProbe)).toBeLessThan(budget(c.startupProbe));
      expect(c.startupProbe?.timeoutSeconds).toBe(plan.healthCheck.requestTimeoutMs / 1000);
    }
  });

  it('rejects a misspelled field, which kubernetes-models lets through', async () => {
    const [web] = kubernetesManifests(await golden('node/express'), { image: 'i', appName: 'a', instance: { cpus: 1, memoryMb: 2048 } }).deployments;
    const object = structuredClone(web) as K8sObject;
    const probe = containers(object)[0]?.readinessProbe as Probe & { periodSecond?: number };
    probe.periodSecond = 5;
    (template(object).metadata as { lables?: object }).lables = {};
    expect(() => new Deployment(object as never).validate()).not.toThrow();
    expect(fields.unknownFields(object).sort()).toEqual(['Deployment.spec.template.metadata.lables', 'Deployment.spec.template.spec.containers[0].readinessProbe.periodSecond']);
    // Maps keep any key; a wrong type is kubernetes-models' to find.
    (template(object).metadata.labels as Record<string, string>)['any.key/name'] = 'v';
    expect(fields.unknownFields(object)).toHaveLength(2);
    (object.spec as { replicas: unknown }).replicas = 'two';
    expect(() => new Deployment(object as never).validate()).toThrow(/replicas/);
  });

  it('keeps secret values in the Secret only (mode 0600), referenced by name', async () => {
    const written = await k8s([
      fixture('ruby/rails-sidekiq'),
      '--plan',
      join(GOLDEN, 'ruby/rails-sidekiq.json'),
      '--cpus',
      '2',
      '--memory',
      '2G',
      '--env',
      `SECRET_KEY_BASE=${SECRET}`,
      '--image',
      'localhost/x/y:1',
    ]);
    expect(written.code, written.output).toBe(0);
    const secret = written.files['secret.yaml'];
    expect(secret?.mode).toBe(0o600);
    expect(secret?.object.stringData).toEqual({ SECRET_KEY_BASE: SECRET });
    for (const [name, file] of Object.entries(written.files)) {
      if (name !== 'secret.yaml') {
        expect(file.mode).toBe(0o644);
        expect(file.text).not.toContain(SECRET);
      }
    }
    expect(written.output).not.toContain(SECRET);
    for (const c of containers(written.files['deployment-sidekiq.yaml']?.object as K8sObject)) {
      expect(c.env).toContainEqual({ name: 'SECRET_KEY_BASE', valueFrom: { secretKeyRef: { name: 'rails-sidekiq-env', key: 'SECRET_KEY_BASE' } } });
      expect(c.env).toContainEqual({ name: 'RAILS_ENV', value: 'production' });
      expect(c.env).toContainEqual({ name: 'APP_HOME', value: '/app' });
    }

    // Without its value, the Secret does not name it, and the command says so; the manifests are written again in place.
    const again = await k8s([fixture('ruby/rails-sidekiq'), '--plan', join(GOLDEN, 'ruby/rails-sidekiq.json'), '--image', 'localhost/x/y:1'], {}, written.out);
    expect(again.code, again.output).toBe(0);
    expect(again.files['secret.yaml']?.object.stringData).toEqual({});
    expect(again.files['secret.yaml']?.text).toContain('add SECRET_KEY_BASE under stringData');
    expect(again.output).toMatch(/warn: no value was given for SECRET_KEY_BASE/);
  });

  it('removes the manifests of a process group that is gone, and nothing else', async () => {
    const first = await k8s([fixture('ruby/rails-sidekiq'), '--plan', join(GOLDEN, 'ruby/rails-sidekiq.json'), '--image', 'localhost/x/y:1']);
    await writeFile(join(first.out, 'ingress.yaml'), 'kind: Ingress\n');
    const second = await k8s([fixture('ruby/rails-sidekiq'), '--plan', join(GOLDEN, 'ruby/rails-puma-config.json'), '--image', 'localhost/x/y:1'], {}, first.out);
    expect(second.code, second.output).toBe(0);
    expect(Object.keys(second.files).sort()).toEqual(['deployment-web.yaml', 'ingress.yaml', 'secret.yaml', 'service.yaml']);
  });

  it('sizes each Pod as the instance the plan was made for', async () => {
    const plan = await golden('ruby/rails-sidekiq');
    const { deployments } = kubernetesManifests(plan, { image: 'i', appName: 'a', instance: { cpus: 2, memoryMb: 2048 }, replicas: 3 });
    const [web, sidekiq] = deployments as [K8sObject, K8sObject];
    expect((web.spec as { replicas: number }).replicas).toBe(3);
    expect((sidekiq.spec as { replicas: number }).replicas).toBe(1);
    expect(containers(sidekiq)[0]?.resources).toEqual({ requests: { cpu: '2', memory: '2048Mi' }, limits: { cpu: '2', memory: '2048Mi' } });
    // Puma and nginx share the instance: together they request one.
    for (const c of containers(web)) expect(c.resources).toEqual({ requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: '2', memory: '2048Mi' } });
    expect(template(web).metadata.annotations[ANNOTATIONS.instance]).toBe('2 CPU, 2048 MiB');
  });

  it('sizes the Pods of a saved plan as the instance it records, and refuses another size or a plan that records none', async () => {
    const sized = await k8s([fixture('node/express'), '--plan', join(GOLDEN, 'node/express.json'), '--image', 'localhost/x/y:1']);
    expect(sized.code, sized.output).toBe(0);
    expect(sized.output).toContain('(each Pod: 2 CPU, 2048 MiB)');
    expect(containers(sized.files['deployment-web.yaml']?.object as K8sObject)[0]?.resources).toEqual({ requests: { cpu: '2', memory: '2048Mi' }, limits: { cpu: '2', memory: '2048Mi' } });
    // The same size given again is no change; --cpus alone keeps the plan's memory.
    expect((await k8s([fixture('node/express'), '--plan', join(GOLDEN, 'node/express.json'), '--cpus', '2', '--image', 'localhost/x/y:1'])).code).toBe(0);
    const small = await k8s([fixture('node/express'), '--plan', join(GOLDEN, 'node/express.json'), '--memory', '1G', '--image', 'localhost/x/y:1']);
    expect(small.code).toBe(2);
    expect(small.output).toContain('RUNPLAN_E_HOST_INVALID_SETTING: the plan was sized for an instance of 2 CPUs, 2048 MiB (the size of the machine that planned it), not 2 CPUs, 1024 MiB');
    expect(Object.keys(small.files)).toEqual([]);
    const { instance: _, ...older } = await golden('play1/health-root');
    const olderFile = join(await tempDir('rp-k8s-plan-'), 'older.json');
    await writeFile(olderFile, JSON.stringify(older));
    const unsized = await k8s([fixture('play1/health-root'), '--plan', olderFile, '--cpus', '2', '--memory', '2G', '--image', 'localhost/x/y:1']);
    expect(unsized.code).toBe(2);
    expect(unsized.output).toContain('RUNPLAN_E_PLAN_DOCUMENT_INVALID: the plan (made by runplan');
    expect(unsized.output).toContain('does not record the instance it was sized for');
  });

  it('rolls the Pods when the plan or the secret names change, not the secret values', async () => {
    const plan = await golden('ruby/rails-sidekiq');
    const checksum = (p: RunPlan, secretValues: Record<string, string> = {}) =>
      template(kubernetesManifests(p, { image: 'i', appName: 'a', instance: { cpus: 2, memoryMb: 2048 }, secretValues }).deployments[0] as K8sObject).metadata.annotations[ANNOTATIONS.configChecksum];
    const base = checksum(plan);
    expect(checksum(plan, { SECRET_KEY_BASE: 'one' })).toBe(base);
    const changed = structuredClone(plan);
    (changed.environment.variables.find((v) => v.name === 'RAILS_MAX_THREADS') as { value: string }).value = '6';
    expect(checksum(changed)).not.toBe(base);
    const moreSecrets = structuredClone(plan);
    moreSecrets.environment.variables.push({ name: 'API_TOKEN', source: 'application', origin: '--env', secret: true });
    expect(checksum(moreSecrets)).not.toBe(base);
  });

  it('groups a process waiting for a socket in RUN_DIR with the one serving it, or with all when none names it', async () => {
    const plan = await golden('ruby/rails-sidekiq');
    expect(processGroups(plan).map((g) => [g.name, g.processes.map((p) => p.name)])).toEqual([
      ['web', ['puma', 'web']],
      ['sidekiq', ['sidekiq']],
    ]);
    const unnamed = structuredClone(plan);
    const puma = unnamed.processes.find((p) => p.name === 'puma');
    if (puma?.command.kind === 'exec') puma.command.argv = ['bundle', 'exec', 'puma', '-C', 'config/puma.rb'];
    expect(processGroups(unnamed).map((g) => g.processes.map((p) => p.name))).toEqual([['puma', 'web', 'sidekiq']]);
  });

  it("health-checks the given paths by the plan's rule: exactly 200, redirects not followed", async () => {
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/ok' || req.url === '/health?deep=1' ? 200 : req.url === '/moved' ? 302 : 503, { location: '/ok' });
      res.end();
    });
    const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
    try {
      const plan = await golden('ruby/rails-puma-config');
      const script = join(await tempDir('rp-hc-'), 'healthcheck');
      await writeFile(script, renderHealthcheck({ ...plan, healthCheck: { ...plan.healthCheck, port, paths: [{ path: '/ok', source: 'test' }] } }), { mode: 0o755 });
      const status = (...args: string[]) => new Promise<number>((resolve) => execFile(script, args, (error) => resolve(error ? Number(error.code) : 0)));
      expect(await status()).toBe(0);
      expect(await status('/ok', '/health?deep=1')).toBe(0);
      expect(await status('/ok', '/moved')).toBe(1);
      expect(await status('/down')).toBe(1);
      expect(await status('ok')).toBe(2);
      // A failed check says why: Docker keeps it in the container's health log.
      const said = (path: string) => new Promise<string>((resolve) => execFile(script, [path], (_error, stdout) => resolve(String(stdout).trim())));
      expect(await said('/moved')).toBe('healthcheck: GET /moved answered 302, not 200');
      server.close();
      expect(await said('/ok')).toMatch(/^healthcheck: GET \/ok got no answer within \d+ s \(curl exit 7\)$/);
    } finally {
      server.close();
    }
  });
});

const dockerHost = inject('dockerHost');
const execProblem = inject('containerExecProblem');
const canPlay = dockerHost !== '' && podmanAvailable();
const skipped = canPlay ? '' : ' (skipped: needs the test Docker engine and podman)';

describe('the Node.js Deployment in podman kube play, through the deploy flow', () => {
  /** The express fixture deployed by PodmanKubeExecutor with a podman of the test's own, and the lines it logged. */
  async function deployExpress(podman: PodmanCli, env: Record<string, string> = {}) {
    const { workDir, cacheDir } = await deploymentDirs();
    const port = await freePort();
    const lines: LogLine[] = [];
    const options = {
      registry: defaultRegistry(),
      appDir: fixture('node/express'),
      inventory: parseInventory(JSON.parse(await readFile(INVENTORY, 'utf8')), INVENTORY),
      host: { port, workDir, cacheDir, instance: { cpus: 1, memoryMb: 1024 }, stabilityWindowMs: 0 },
      env: { application: Object.entries(env).map(([name, value]) => ({ name, value, origin: 'test' })) },
      sink: (line: LogLine) => lines.push(line),
      docker: await DockerCli.connect({ host: dockerHost }),
      podman,
    };
    const outcome = await deploy(await planToCarryOut(options), new PodmanKubeExecutor(options), options).catch((error: unknown) => error as RunplanError);
    return { outcome, lines, port, health: () => lines.filter((l) => l.origin.kind === 'health').map((l) => l.text) };
  }

  it.skipIf(!canPlay)(`answers as the fixture does, as the manifest says, and stops leaving nothing${skipped}`, { timeout: 600_000 }, async () => {
    const podman = await startPodman();
    try {
      const { outcome, port, health } = await deployExpress(podman);
      if (outcome instanceof Error) throw outcome;
      try {
        expect(health()).toEqual([`Port ${port} accepts connections`]);
        // The container runs as the manifest says: user 1000, the plan's PORT, the instance's memory.
        const root = await get(`http://127.0.0.1:${port}/`);
        expect(root.status).toBe(200);
        expect(JSON.parse(root.body)).toMatchObject({ app: 'express', installedBy: 'npm', uid: 1000, port: String(port) });
        expect((await get(`http://127.0.0.1:${port}/redirect`)).status).toBe(302);
        const [container] = (await podman.ok(['ps', '--format', '{{.Names}}'])).split('\n').filter((n) => n.endsWith('-web'));
        expect(container).toBeDefined();
        // The probes' command, run where the kubelet would run it (exec lands outside the container under a chroot).
        if (execProblem === '') expect((await podman.ok(['exec', container as string, '/opt/runplan/healthcheck'])).trim()).toBe('');
        expect((await podman.ok(['inspect', '--format', '{{.HostConfig.Memory}}', container as string])).trim()).toBe(String(1024 * 1024 * 1024));
        expect(outcome.running.processes()).toEqual([{ name: 'web', pid: undefined, restarts: 0, running: true }]);
      } finally {
        await outcome.stop();
      }
      expect((await podman.ok(['ps', '--all', '--quiet'])).trim()).toBe('');
      expect((await podman.ok(['pod', 'ps', '--quiet'])).trim()).toBe('');
      expect((await podman.ok(['secret', 'ls', '--quiet'])).trim()).toBe('');
    } finally {
      expect(await podman.remove()).toEqual([]);
    }
  });

  it.skipIf(!canPlay)(`runplan deploy --engine podman serves until SIGTERM, then removes what it made${skipped}`, { timeout: 600_000 }, async () => {
    const { workDir, cacheDir } = await deploymentDirs();
    // podman's own directory goes under TMPDIR: empty again once runplan has stopped.
    const tmp = await tempDir('rp-tmp-');
    const port = await freePort();
    const args = ['deploy', fixture('node/express'), '--engine', 'podman', '--inventory', INVENTORY, '--cpus', '1', '--memory', '1G', '--port', String(port), '--stability-window', '0'];
    const run = startCli(args, { DOCKER_HOST: dockerHost, RUNPLAN_CACHE_DIR: cacheDir, RUNPLAN_WORK_DIR: workDir, TMPDIR: tmp });
    try {
      await run.waitFor('==> deployment healthy', 540_000);
      expect(run.output()).toContain(`http://127.0.0.1:${port}/ (published on 127.0.0.1 by podman kube play, 1 container(s))`);
      expect(JSON.parse((await get(`http://127.0.0.1:${port}/`)).body)).toMatchObject({ app: 'express', uid: 1000 });
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited, run.output()).toBe(0);
    expect(run.output()).toContain('stopped; nothing left running');
    expect(await readdir(tmp)).toEqual([]);
  });

  it.skipIf(!canPlay)(`a failing health check fails the deployment with the specification's lines and leaves no pod nor container${skipped}`, { timeout: 600_000 }, async () => {
    const podman = await startPodman();
    try {
      const { outcome, health } = await deployExpress(podman, { CC_HEALTH_CHECK_PATH: '/missing', CC_RUN_FAILED_HOOK: 'echo "run-failed hook in podman"' });
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as RunplanError).code).toBe('RUNPLAN_E_HEALTH_CHECK_FAILED');
      expect(health()).toEqual(expect.arrayContaining(['Health check failed:', '- GET /missing returned 404.', HEALTH_CLOSING_LINE]));
      expect((await podman.ok(['ps', '--all', '--quiet'])).trim()).toBe('');
      expect((await podman.ok(['pod', 'ps', '--quiet'])).trim()).toBe('');
    } finally {
      expect(await podman.remove()).toEqual([]);
    }
  });
});
