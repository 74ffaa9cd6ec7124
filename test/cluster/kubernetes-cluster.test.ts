import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Against a real cluster: part of `npm test` when KUBECONFIG points at one, and
 * reported as not run otherwise (no API server can be had on the test machines);
 * `npm run test:cluster` runs it alone. The cluster must be able to pull the image: RUNPLAN_TEST_K8S_IMAGE names
 * one built from this plan (`runplan image`) and pushed where it can.
 */
describe('a real cluster', () => {
  it("takes the manifests with kubectl apply, and the Deployment becomes ready (its readiness probe is the plan's health check)", { timeout: 600_000 }, async () => {
    expect(process.env.KUBECONFIG, 'the real-cluster test needs KUBECONFIG pointing at a cluster').toBeTruthy();
    const image = process.env.RUNPLAN_TEST_K8S_IMAGE ?? 'localhost/runplan-test/express:k8s';
    const namespace = `runplan-test-${randomBytes(3).toString('hex')}`;
    const out = await tempDir('rp-k8s-cluster-');
    const inventory = join(ROOT, 'test', 'golden', 'inventory.json');
    const written = await runCli(['k8s', join(ROOT, 'fixtures', 'node', 'express'), '--out', out, '--inventory', inventory, '--cpus', '1', '--memory', '1G', '--replicas', '1', '--image', image]);
    expect(written.code, written.output).toBe(0);
    const kubectl = (...args: string[]) =>
      new Promise<string>((resolve, reject) => execFile('kubectl', args, (error, stdout, stderr) => (error ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout))));
    await kubectl('create', 'namespace', namespace);
    try {
      await kubectl('apply', '--namespace', namespace, '-f', out);
      await kubectl('rollout', 'status', '--namespace', namespace, 'deployment/express-web', '--timeout=300s');
    } finally {
      await kubectl('delete', 'namespace', namespace, '--wait=false');
    }
  });
});
