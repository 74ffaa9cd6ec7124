import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DockerCli } from '../../src/engines/docker-cli.js';
import { appName } from '../../src/engines/app-name.js';
import { removeSwarmApp } from '../../src/engines/swarm.js';
import { ROOT, runCli, startCli } from '../helpers/cli.js';
import { get } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';

/**
 * `runplan deploy --engine swarm` for real, on the tests' own Docker engine made
 * a single-node swarm for this file (NOTES.md, "Container engines": no IPVS, so
 * DNS round robin behind runplan's proxy). The Express fixture is deployed with
 * 2 replicas, updated under a steady request loop, given an update that fails,
 * and removed.
 */
const dockerHost = inject('dockerHost');
// Swarm counts a task as running once its HEALTHCHECK passes, which the engine runs with exec.
const execProblem = inject('containerExecProblem');
const EXPRESS = join(ROOT, 'fixtures', 'node', 'express');
const APP = 'express';
const SECRET = 'not-in-any-spec-7f3a';

function docker(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/usr/bin/docker', [...args], { env: { ...process.env, DOCKER_HOST: dockerHost } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code) || 1 : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

interface LoadCount {
  sent: number;
  ok: number;
  failed: number;
  failures: Record<string, number>;
  /** NODE_ENV reported by the answers, with how many said it. */
  nodeEnv: Record<string, number>;
}

/** GET `url` 20 times a second until stop() (each request its own connection, as separate clients would), counting answers. */
function requestLoop(url: string): { stop(): Promise<LoadCount> } {
  const count: LoadCount = { sent: 0, ok: 0, failed: 0, failures: {}, nodeEnv: {} };
  const pending: Promise<void>[] = [];
  const fail = (why: string) => {
    count.failed++;
    count.failures[why] = (count.failures[why] ?? 0) + 1;
  };
  const one = () =>
    new Promise<void>((resolve) => {
      count.sent++;
      const req = request(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          if (res.statusCode === 200) {
            count.ok++;
            const env = String((JSON.parse(body) as { nodeEnv: unknown }).nodeEnv);
            count.nodeEnv[env] = (count.nodeEnv[env] ?? 0) + 1;
          } else fail(`HTTP ${res.statusCode}`);
          resolve();
        });
      });
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.on('error', (e: NodeJS.ErrnoException) => {
        fail(e.code ?? e.message);
        resolve();
      });
      req.end();
    });
  const timer = setInterval(() => pending.push(one()), 50);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      return count;
    },
  };
}

/** `runplan deploy --engine swarm`: run by test/engines/swarm.test.ts with the other Swarm suites. */
export function describeSwarmDeploy(): void {
  describe.skipIf(!dockerHost)('runplan deploy --engine swarm', () => {
    let env: Record<string, string>;
    let port: number;
    let url: string;

    beforeAll(async () => {
      // The engine keeps its data root between runs: a run that stopped half-way may have left it in a swarm.
      await docker(['swarm', 'leave', '--force']);
      port = await freePort();
      url = `http://127.0.0.1:${port}/`;
      env = { ...(await deploymentDirs()).env, DOCKER_HOST: dockerHost };
    });

    it('refuses an engine that is not a swarm manager (RUNPLAN_E_SWARM_NOT_MANAGER)', async () => {
      const run = await runCli(['deploy', EXPRESS, '--engine', 'swarm', '--port', String(port)], env);
      expect(run.stderr).toContain('RUNPLAN_E_SWARM_NOT_MANAGER');
      expect(run.code).toBe(1);
    });

    describe.skipIf(execProblem !== '')('on a single-node swarm', () => {
      let firstImage: string;

      beforeAll(async () => {
        const init = await docker(['swarm', 'init', '--advertise-addr', '127.0.0.1', '--listen-addr', `127.0.0.1:${await freePort()}`]);
        expect(init.stderr).toBe('');
      });

      afterAll(async () => {
        // Whatever a failed test left; then the swarm itself.
        await removeSwarmApp(await DockerCli.connect({ host: dockerHost }), APP);
        await docker(['swarm', 'leave', '--force']);
      });

      it('deploys the web process as 2 replicas behind the proxy, serving on 127.0.0.1, with the secret as a file', async () => {
        const secrets = join(await tempDir(), 'secrets.env');
        await writeFile(secrets, `API_SECRET=${SECRET}\n`);
        const run = await runCli(['deploy', EXPRESS, '--engine', 'swarm', '--port', String(port), '--app-env-file', secrets], env);
        expect(run.code, run.output).toBe(0);
        expect(run.stdout).toContain(`Port ${port} accepts connections`);
        expect(run.stdout).toMatch(/express-web: 2 of 2 task\(s\) running as planned/);
        firstImage = /built image (\S+) /.exec(run.stdout)![1]!;

        const answer = await get(url);
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body)).toMatchObject({ app: 'express', nodeEnv: null, port: String(port) });

        const services = (await docker(['service', 'ls', '--format', '{{.Name}} {{.Mode}} {{.Replicas}}'])).stdout.trim().split('\n').sort();
        expect(services).toEqual(['express replicated 1/1', 'express-web replicated 2/2']);
        const web = JSON.parse((await docker(['service', 'inspect', 'express-web'])).stdout)[0];
        expect(web.Spec.EndpointSpec.Mode).toBe('dnsrr');
        expect(web.Spec.UpdateConfig).toMatchObject({ Order: 'start-first', FailureAction: 'rollback' });
        // The secret's value is in no specification, only in the tasks' environment (from /run/secrets/API_SECRET).
        expect(JSON.stringify(web)).not.toContain(SECRET);
        const task = (await docker(['ps', '--quiet', '--filter', 'label=com.docker.swarm.service.name=express-web'])).stdout.split('\n')[0]!;
        const environ = await docker(['exec', task, 'sh', '-c', 'for p in /proc/[0-9]*; do grep -q server.js $p/cmdline 2>/dev/null && tr "\\0" "\\n" < $p/environ; done']);
        expect(environ.stdout).toContain(`API_SECRET=${SECRET}`);
      }, 900_000);

      it('updates in place under a steady request loop with 0 failed requests (start-first, one task at a time)', async () => {
        const loop = requestLoop(url);
        const started = Date.now();
        const run = await runCli(['deploy', EXPRESS, '--engine', 'swarm', '--port', String(port), '--env', 'NODE_ENV=staging'], env);
        const updateMs = Date.now() - started;
        await new Promise((r) => setTimeout(r, 1_000));
        const count = await loop.stop();
        console.log(
          `swarm update: ${(updateMs / 1000).toFixed(1)} s (runplan deploy, image build included); requests sent ${count.sent}, ok ${count.ok}, failed ${count.failed} ${JSON.stringify(count.failures)}; NODE_ENV seen ${JSON.stringify(count.nodeEnv)}`,
        );
        expect(run.code, run.output).toBe(0);
        expect(run.stdout).toContain('updating service express-web');
        expect(run.stdout).toContain('service express is already as planned');
        expect(count.sent).toBeGreaterThan(100);
        expect(count.failed).toBe(0);
        expect(count.nodeEnv.staging).toBeGreaterThan(0);
        expect(JSON.parse((await get(url)).body).nodeEnv).toBe('staging');
        // The secret is no longer in the plan: its swarm secret went with it.
        expect((await docker(['secret', 'ls', '--quiet'])).stdout.trim()).toBe('');
      }, 300_000);

      it('redeploys an unchanged plan without touching the services', async () => {
        const run = await runCli(['deploy', EXPRESS, '--engine', 'swarm', '--port', String(port), '--env', 'NODE_ENV=staging'], env);
        expect(run.code, run.output).toBe(0);
        expect(run.stdout).toContain('service express-web is already as planned');
        expect(run.stdout).toContain('express already deployed as planned');
      }, 300_000);

      it("rolls back an update whose tasks fail the health check, with the gate's own lines and error; the previous version keeps serving", async () => {
        const loop = requestLoop(url);
        const run = await runCli(['deploy', EXPRESS, '--engine', 'swarm', '--port', String(port), '--env', 'NODE_ENV=broken', '--env', 'CC_HEALTH_CHECK_PATH=/missing', '--timeout', '5'], env);
        const count = await loop.stop();
        console.log(`swarm failed update: requests sent ${count.sent}, ok ${count.ok}, failed ${count.failed}; NODE_ENV seen ${JSON.stringify(count.nodeEnv)}`);
        expect(run.code, run.output).toBe(1);
        // Swarm ran the check (its update waits for the image's HEALTHCHECK): reported as every engine reports a failed gate.
        expect(run.stderr).toContain('RUNPLAN_E_HEALTH_CHECK_FAILED');
        for (const line of ['Response from GET /missing is 404', 'Health check failed:', '- GET /missing returned 404.']) expect(run.output).toContain(line);
        expect(run.output).toContain('rolled it back');
        // Why the new tasks were unhealthy, from their health checks' own output.
        expect(run.output).toContain('health check exited 1: healthcheck: GET /missing answered 404, not 200');
        expect(count.failed).toBe(0);
        expect(count.nodeEnv.broken).toBeUndefined();
        expect(JSON.parse((await get(url)).body).nodeEnv).toBe('staging');
      }, 300_000);

      it('refuses an image built from another plan (RUNPLAN_E_SWARM_IMAGE_MISMATCH)', async () => {
        const run = await runCli(['deploy', EXPRESS, '--engine', 'swarm', '--port', String(port), '--image', firstImage, '--env', 'NODE_ENV=other'], env);
        expect(run.stderr).toContain('RUNPLAN_E_SWARM_IMAGE_MISMATCH');
        expect(run.code).toBe(2);
      }, 300_000);

      it('removes the images of earlier deployments once one is accepted, but the one it runs and the one rollback returns to', async () => {
        // The images runplan built for this deployment, as it labels them; other builds of the same repository are not its to remove.
        const images = async () =>
          (await docker(['image', 'ls', '--filter', 'label=io.runplan.swarm-deployment=express', '--format', '{{.Repository}}:{{.Tag}}'])).stdout
            .trim()
            .split('\n')
            .filter((ref) => ref && !ref.includes('<none>'))
            .sort();
        // Left by the earlier tests: the first deployment's image, the serving one (NODE_ENV=staging) and the refused update's.
        const before = await images();
        expect(before.length).toBeGreaterThanOrEqual(3);
        const run = await runCli(['deploy', EXPRESS, '--engine', 'swarm', '--port', String(port), '--env', 'NODE_ENV=pruned'], env);
        expect(run.code, run.output).toBe(0);
        const serving = /built image (\S+) /.exec(run.stdout)![1]!;
        const previous = JSON.parse((await docker(['service', 'inspect', 'express-web'])).stdout)[0].PreviousSpec.TaskTemplate.ContainerSpec.Image;
        expect(await images()).toEqual([serving, previous].sort());
        expect(run.stdout).toContain('removed images of earlier deployments:');
        expect(before).toContain(firstImage);
        expect(await images()).not.toContain(firstImage);
      }, 300_000);

      it('removes every service, network, secret and config it made', async () => {
        const run = startCli(['deploy', EXPRESS, '--engine', 'swarm', '--remove'], env);
        expect(await run.exited, run.output()).toBe(0);
        expect(run.stdout()).toContain('removed express from the swarm');
        expect((await docker(['service', 'ls', '--quiet'])).stdout.trim()).toBe('');
        for (const kind of ['network', 'secret', 'config']) {
          expect((await docker([kind, 'ls', '--quiet', '--filter', 'label=io.runplan.managed=true'])).stdout.trim(), kind).toBe('');
        }
        expect((await docker(['ps', '--all', '--quiet', '--filter', 'label=io.runplan.engine=swarm'])).stdout.trim()).toBe('');
        await expect(get(url)).rejects.toThrow();
      }, 120_000);

      it('fails a first deployment whose web task exits within the stability window after the health check, and removes it (RUNPLAN_E_RUN_PROCESS_EXITED)', async () => {
        // Its tasks pass the image's HEALTHCHECK; one exits once runplan's own check reached it through the proxy.
        // Swarm tells an exit by its task list, late on a loaded machine: a window long enough that the exit lands in it (an exit ends the wait at once).
        const dir = await tempDir('unstable-');
        await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'unstable', version: '1.0.0', main: 'server.js' }));
        await writeFile(join(dir, '.gitignore'), '/node_modules\n');
        await writeFile(
          join(dir, 'server.js'),
          `require('http').createServer((q, s) => { s.end('ok'); if (q.headers['user-agent'] === 'runplan-health-check') setTimeout(() => { console.error('checked, leaving'); process.exit(3); }, 300); }).listen(+process.env.PORT, '0.0.0.0');`,
        );
        const app = appName(dir);
        try {
          const run = await runCli(['deploy', dir, '--engine', 'swarm', '--port', String(port), '--env', 'CC_HEALTH_CHECK_PATH=/', '--stability-window', '20'], env);
          expect(run.code, run.output).toBe(1);
          expect(run.stdout).toContain('Response from GET / is 200');
          expect(run.stdout).toContain('(stability window)');
          expect(run.stderr).toMatch(
            /error RUNPLAN_E_RUN_PROCESS_EXITED: the deployment failed: the web process exited with status 3 .* after its health check passed, within the stability window of 20 s;.* "checked, leaving"/,
          );
          expect((await docker(['service', 'ls', '--quiet', '--filter', `label=io.runplan.deployment=${app}`])).stdout.trim()).toBe('');
        } finally {
          await removeSwarmApp(await DockerCli.connect({ host: dockerHost }), app);
        }
      }, 300_000);
    });
  });
}
