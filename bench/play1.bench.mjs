// Play 1.x: installing a distribution (download + SHA-256 + unpack + link) against
// a cache hit, and the time a stand-in application takes to become healthy.
// The distribution is synthetic but shaped like a real one (about 100 MB zip of
// jars and small files); the application runs on the test stand-in (NOT Play).
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, median, root, reachableTemp, HEALTHY } from './lib.mjs';

export const title = 'Play 1.x framework install and start';

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

function serve(files) {
  const server = createServer((req, res) => {
    const bytes = files.get(req.url);
    if (!bytes) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': bytes.length }).end(bytes);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${server.address().port}` })));
}

function syntheticDistribution(dir, version) {
  const top = join(dir, `play-${version}`);
  mkdirSync(join(top, 'framework', 'lib'), { recursive: true });
  writeFileSync(join(top, 'play'), '#!/bin/sh\n', { mode: 0o755 });
  // Jars are already compressed: random bytes stand for them. Text files (docs, samples, python) compress.
  for (let i = 0; i < 320; i++) writeFileSync(join(top, 'framework', 'lib', `lib-${i}.jar`), randomBytes(256 * 1024));
  for (let d = 0; d < 40; d++) {
    mkdirSync(join(top, 'documentation', `part-${d}`), { recursive: true });
    for (let i = 0; i < 50; i++) writeFileSync(join(top, 'documentation', `part-${d}`, `page-${i}.textile`), `h1. Page ${i}\n\n${'Some documentation text. '.repeat(400)}`);
  }
  const zip = join(dir, `play-${version}.zip`);
  execFileSync('python3', ['-c', 'import shutil,sys; shutil.make_archive(sys.argv[1][:-4], "zip", sys.argv[2], sys.argv[3])', zip, dir, `play-${version}`]);
  return readFileSync(zip);
}

export async function run({ args }) {
  const runs = Number(args['play1-runs'] ?? 5);
  const { Logger } = await import(join(root, 'dist', 'index.js'));
  const { StepBuilder, assembleEnvironment, resolveHostSettings } = await import(join(root, 'dist', 'internals.js'));
  const work = reachableTemp(join(tmpdir(), 'runplan-bench-play1-'));
  try {
    const zip = syntheticDistribution(work, '9.9.9');
    const { server, base } = await serve(new Map([['/play-9.9.9.zip', zip]]));
    // The install step the Play 1.x plan holds, carried out by the builder on its own
    // (carryOutInstall is not among the package's exports; around it the builder only binds the step).
    const install = {
      name: 'framework',
      description: 'install Play 9.9.9 from the mirror through the shared cache (SHA-256 verified)',
      run: { kind: 'install', source: { type: 'archive', url: `${base}/play-9.9.9.zip`, sha256: sha256(zip) }, target: '.runplan/play-9.9.9', executables: ['play'], links: [] },
      cwd: '.',
      env: {},
      pathPrepend: [],
      layer: null,
    };
    // Only what the builder reads of a plan: no process, no variable.
    const plan = { build: { steps: [install] }, layers: [], files: [], processes: [], environment: { variables: [] } };
    const builder = new StepBuilder();
    const env = assembleEnvironment({});
    const logger = new Logger(() => undefined);
    const once = async (cacheDir) => {
      const appDir = reachableTemp(join(work, 'app-'));
      const t = process.hrtime.bigint();
      await builder.build({ plan, appDir, env, host: resolveHostSettings({ cacheDir, instance: { cpus: 1, memoryMb: 512 } }), logger });
      const elapsed = Number(process.hrtime.bigint() - t) / 1e6;
      rmSync(appDir, { recursive: true, force: true });
      return elapsed;
    };
    const cold = [];
    const warm = [];
    for (let i = 0; i < runs; i++) {
      const cacheDir = reachableTemp(join(work, 'cache-'));
      cold.push(await once(cacheDir));
      warm.push(await once(cacheDir));
      rmSync(cacheDir, { recursive: true, force: true });
    }
    server.close();
    console.log(`install a ${(zip.length / 1048576).toFixed(0)} MB distribution (2,321 files) from a local HTTP mirror, ${runs} runs`);
    console.log(`  cold (download + SHA-256 + unzip + rename + one link into the build): median ${median(cold).toFixed(0)} ms`);
    console.log(`  cache hit (one link into the build):                                    median ${median(warm).toFixed(0)} ms   ratio ${(median(cold) / median(warm)).toFixed(1)}×`);

    await timeToHealthy(work, runs);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `runplan run` of fixtures/play1/health-root on the stand-in, from start to "deployment healthy". */
async function timeToHealthy(work, runs) {
  const { buildStandIn } = await import(join(root, 'test', 'stand-in', 'play1', 'build-stand-in.mjs'));
  const build = await buildStandIn({ cacheDir: join(work, 'stand-in'), releases: ['1.11.0'] });
  const archive = build.archives['1.11.0'].zip;
  const { server, base } = await serve(new Map([['/play-1.11.0.zip', readFileSync(archive.file)]]));
  const env = {
    ...process.env,
    RUNPLAN_CACHE_DIR: join(work, 'runplan-cache'),
    RUNPLAN_PLAY1_MIRROR: `${base}/play-{version}.zip`,
    RUNPLAN_PLAY1_CHECKSUMS: `1.11.0=${archive.sha256}`,
  };
  const built = [];
  const healthy = [];
  for (let i = 0; i <= runs; i++) {
    const port = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = s.address();
        s.close(() => resolve(free));
      });
    });
    const t = process.hrtime.bigint();
    const child = spawn(process.execPath, [cli, 'run', join(root, 'fixtures', 'play1', 'health-root'), '--port', String(port), '--memory', '512M'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let builtAt;
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (c) => {
        out += c;
        if (builtAt === undefined && out.includes('==> build succeeded')) builtAt = Number(process.hrtime.bigint() - t) / 1e6;
        if (HEALTHY.test(out)) resolve();
      });
      child.on('exit', () => reject(new Error(`runplan exited before being healthy:\n${out}`)));
    });
    const healthyAt = Number(process.hrtime.bigint() - t) / 1e6;
    child.removeAllListeners('exit');
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGINT');
    await exited;
    // The first run downloads the framework; the others use the cache, as a host's later builds do.
    if (i > 0) {
      built.push(builtAt);
      healthy.push(healthyAt);
    }
  }
  server.close();
  console.log(`\`runplan run\` of fixtures/play1/health-root on the stand-in (framework cached), ${runs} runs`);
  console.log(`  build done (copy, java check, link, play deps, play precompile): median ${median(built).toFixed(0)} ms`);
  console.log(`  deployment healthy (GET / answered 200):                         median ${median(healthy).toFixed(0)} ms`);
}
