// Images: a warm `runplan image` of an unchanged application (plan, build context,
// a BuildKit build that reuses every cached layer) against a plain `docker build`
// of a hand-written Dockerfile for the same application on the same stack image,
// also warm. Both run against one engine, interleaved.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { startTestEngine } from '../scripts/test-engine.mjs';
import { cli, median, ms, ratio, root, target, timeCommand } from './lib.mjs';

export const title = 'images';

const HAND_WRITTEN = (base) => `FROM ${base}
COPY node/ /opt/node/
ENV PATH=/opt/node/bin:$PATH
WORKDIR /app
COPY app/package.json app/package-lock.json ./
RUN --mount=type=secret,id=ca,target=/tmp/ca.crt NODE_EXTRA_CA_CERTS=/tmp/ca.crt npm ci --omit=dev
COPY app/ ./
USER 1000:1000
CMD ["node", "server.js"]
`;

export async function run({ args }) {
  const runs = Number(args['image-runs'] ?? 5);
  const cache = join(process.env.RUNPLAN_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'runplan'), 'bench');
  const engine = process.env.DOCKER_HOST ? undefined : await startTestEngine(join(cache, 'engine'));
  const env = { ...process.env, DOCKER_HOST: process.env.DOCKER_HOST ?? engine?.host, RUNPLAN_CACHE_DIR: cache, DOCKER_BUILDKIT: '1' };
  // The hand-written build needs this machine's certificate authority as well (a secret, as runplan passes it).
  const ca = process.env.NODE_EXTRA_CA_CERTS || process.env.SSL_CERT_FILE || '/etc/ssl/certs/ca-certificates.crt';
  const express = join(root, 'fixtures', 'node', 'express');
  const scratch = join(cache, 'image-bench');
  try {
    const { DockerCli, STACKS, buildImage, ensureStackImage } = await import(join(root, 'dist', 'engines', 'docker.js'));
    const { defaultRegistry } = await import(join(root, 'dist', 'index.js'));
    const { ensureTree } = await import(join(root, 'dist', 'internals.js'));
    const docker = await DockerCli.connect({ host: env.DOCKER_HOST });
    const base = await ensureStackImage(docker, STACKS.node);
    // The hand-written build's context: the same Node.js, unpacked from runplan's verified cache.
    const plan = JSON.parse(timeOutput(process.execPath, [cli, 'plan', express, '--json'], env));
    const nodeStep = plan.build.steps.find((s) => s.name === 'runtime').run.source;
    const npmStep = plan.build.steps.find((s) => s.name === 'npm').run.source;
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(scratch, { recursive: true });
    cpSync((await ensureTree(cache, nodeStep)).dir, join(scratch, 'node'), { recursive: true });
    cpSync((await ensureTree(cache, npmStep)).dir, join(scratch, 'node', 'lib', 'node_modules', 'npm'), { recursive: true });
    mkdirSync(join(scratch, 'node', 'bin'), { recursive: true });
    writeFileSync(join(scratch, 'node', 'bin', 'npm'), '#!/bin/sh\nexec /opt/node/bin/node /opt/node/lib/node_modules/npm/bin/npm-cli.js "$@"\n', { mode: 0o755 });
    cpSync(express, join(scratch, 'app'), { recursive: true, filter: (p) => !p.includes('node_modules') });
    writeFileSync(join(scratch, 'Dockerfile'), HAND_WRITTEN(base));

    const runplan = () => timeCommand(process.execPath, [cli, 'image', express, '--tag', 'runplan-bench/express:runplan'], { env });
    // A host's call (runplan-host builds its releases so): the SDK in a process that already planned the app once.
    const registry = defaultRegistry();
    const sdk = async () => {
      const started = performance.now();
      await buildImage({ registry, appDir: express, docker, tag: 'runplan-bench/express:sdk', host: { cacheDir: cache }, sink: () => undefined });
      return performance.now() - started;
    };
    const plain = () => timeCommand('/usr/bin/docker', ['build', '--network=host', '-q', '--secret', `id=ca,src=${ca}`, '-t', 'runplan-bench/express:plain', scratch], { env });
    runplan();
    await sdk();
    plain();
    const a = [];
    const c = [];
    const b = [];
    for (let i = 0; i < runs; i++) {
      a.push(runplan());
      c.push(await sdk());
      b.push(plain());
    }
    console.log(`warm rebuild of the unchanged Express fixture, ${runs} runs each, interleaved (engine ${env.DOCKER_HOST})`);
    console.log(`  runplan image (plan, context, BuildKit with every layer cached) median ${ms(median(a))}`);
    console.log(`  buildImage() in a process that planned it before (a host's call)   median ${ms(median(c))}`);
    console.log(`  docker build of a hand-written Dockerfile (every layer cached)   median ${ms(median(b))}   ratio ${ratio(median(a), median(b))} (CLI), ${ratio(median(c), median(b))} (SDK)`);
    for (const [how, times] of [
      ['`runplan image` (a new CLI process)', a],
      ['`buildImage()` (the SDK, as a host calls it)', c],
    ]) {
      target({
        what: `Warm rebuild of the unchanged Express fixture with ${how} ≤ 1.2× a plain \`docker build\`, every layer cached`,
        runplan: ms(median(times)),
        against: ms(median(b)),
        limit: `${ratio(median(times), median(b))} (≤ 1.2×)`,
        met: median(times) <= 1.2 * median(b),
      });
    }
    // Sizes as `docker image ls` gives them: uncompressed, every layer counted once.
    const size = async (ref) => Number((await docker.run(['image', 'inspect', '--format', '{{.Size}}', ref])).stdout.trim()) / 1e6;
    const [app, hand, stack] = [await size('runplan-bench/express:runplan'), await size('runplan-bench/express:plain'), await size(base)];
    const nodeBinary = statSync(join(scratch, 'node', 'bin', 'node')).size / 1e6;
    // What a registry shows is compressed: every layer gzipped, as `docker push` sends them (the sum of the layers, here in one stream).
    const compressed = (ref) => Number(execFileSync('/bin/sh', ['-c', 'docker save "$1" | gzip -6 | wc -c', 'sh', ref], { env, encoding: 'utf8' }).trim()) / 1e6;
    const [appGz, handGz] = [compressed('runplan-bench/express:runplan'), compressed('runplan-bench/express:plain')];
    console.log(
      `  sizes: runplan image ${app.toFixed(1)} MB (${appGz.toFixed(1)} MB compressed), hand-written image ${hand.toFixed(1)} MB (${handGz.toFixed(1)} MB compressed), the node stack image ${stack.toFixed(1)} MB, Node.js's binary alone ${nodeBinary.toFixed(1)} MB`,
    );
    target({
      what: 'The Express image ≤ 150 MB (uncompressed)',
      runplan: `${app.toFixed(1)} MB`,
      against: `stack ${stack.toFixed(1)} MB + Node.js binary ${nodeBinary.toFixed(1)} MB`,
      limit: '150 MB',
      met: app <= 150,
      note: `compressed ${appGz.toFixed(1)} MB, against 132 MB for Railpack's node-npm example (issue 27)${app <= 150 ? '' : `; uncompressed, the stack and Node.js's binary alone make ${(stack + nodeBinary).toFixed(0)} MB (docs/perf.md, "Image sizes")`}`,
    });
    await docker.run(['image', 'rm', 'runplan-bench/express:runplan', 'runplan-bench/express:sdk', 'runplan-bench/express:plain']);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await engine?.stop();
  }
}

function timeOutput(file, argv, env) {
  return execFileSync(file, argv, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}
