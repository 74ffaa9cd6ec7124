import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { K8sObject } from '../../src/engines/kubernetes.js';
import { kubernetesManifests } from '../../src/engines/entries/kubernetes.js';
import { playedContainers, podmanEvent, podmanImageName, podmanManifest, podmanSecret } from '../../src/engines/podman-kube.js';
import { parsePlan } from '../../src/planning/create-plan.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { ROOT } from '../helpers/cli.js';

/** What PodmanKubeExecutor gives podman, from the same manifests `runplan k8s` writes (the podman run itself: test/engines/kubernetes.test.ts). */
const golden = async (name: string): Promise<RunPlan> => parsePlan(JSON.parse(await readFile(join(ROOT, 'test', 'golden', `${name}.json`), 'utf8')));
const manifestsOf = (plan: RunPlan) => kubernetesManifests(plan, { image: 'localhost/runplan/app:1', appName: 'app-1a2b3c', instance: { cpus: 1, memoryMb: 1024 }, replicas: 1 });

describe('podman kube play of a plan', () => {
  it('binds the web port on 127.0.0.1 as a hostPort, and keeps the Secret out of the played file', async () => {
    const plan = await golden('ruby/rails-sidekiq');
    const docs = (await podmanManifest(manifestsOf(plan), plan)).split(/^---$/m).map((t) => parse(t) as K8sObject);
    expect(docs.map((d) => d.kind)).toEqual(['Deployment', 'Deployment']);
    const ports = docs.flatMap((d) => (d.spec as { template: { spec: { containers: { ports?: unknown[] }[] } } }).template.spec.containers.flatMap((c) => c.ports ?? []));
    expect(ports).toEqual([{ name: 'http', containerPort: plan.healthCheck.port, protocol: 'TCP', hostIP: '127.0.0.1', hostPort: plan.healthCheck.port }]);
  });

  it('names the containers podman makes, and the process each runs', async () => {
    expect([...playedContainers(manifestsOf(await golden('ruby/rails-sidekiq')))]).toEqual([
      ['app-1a2b3c-web-pod-0-puma', { pod: 'app-1a2b3c-web-pod-0', process: 'puma' }],
      ['app-1a2b3c-web-pod-0-web', { pod: 'app-1a2b3c-web-pod-0', process: 'web' }],
      ['app-1a2b3c-sidekiq-pod-0-sidekiq', { pod: 'app-1a2b3c-sidekiq-pod-0', process: 'sidekiq' }],
    ]);
  });

  it("reads podman's events of the deployment's containers only, with exit status and time in nanoseconds", () => {
    const containers = new Map([['app-web-pod-0-web', { process: 'web' }]]);
    const died = '{"ContainerExitCode":3,"ID":"c5","Name":"app-web-pod-0-web","Status":"died","Time":"2026-11-26T01:53:59.435950721Z","Type":"container"}';
    expect(podmanEvent(died, containers)).toEqual({ process: 'web', container: 'app-web-pod-0-web', action: 'die', timeNs: Date.parse('2026-11-26T01:53:59Z') * 1e6 + 435950721, exitCode: 3 });
    expect(podmanEvent(died.replace('"died"', '"start"'), containers)).toMatchObject({ action: 'start', exitCode: undefined });
    expect(podmanEvent(died.replace('"died"', '"init"'), containers)).toBeUndefined();
    expect(podmanEvent(died.replace('app-web-pod-0-web', 'other-pod-0-web'), containers)).toBeUndefined();
    expect(podmanEvent('not json', containers)).toBeUndefined();
  });

  it('gives podman the secret values as its secretKeyRef reads them, and names images with their registry', () => {
    expect(JSON.parse(podmanSecret({ SECRET_KEY_BASE: 'v=1 ü' }))).toEqual({ SECRET_KEY_BASE: Buffer.from('v=1 ü').toString('base64') });
    expect(podmanImageName('runplan/express:0123456789ab')).toBe('localhost/runplan/express:0123456789ab');
    expect(podmanImageName('express:1')).toBe('localhost/express:1');
    expect(podmanImageName('localhost/x/y:1')).toBe('localhost/x/y:1');
    expect(podmanImageName('registry.example.org:5000/x/y:1')).toBe('registry.example.org:5000/x/y:1');
  });
});
