// The storage add-ons' Ceph cluster (issue 48) on a real runplan-host (BenchHost): the first storage
// add-on (the cluster made, then the user), the daemons' resident memory idle, a cold start (serve
// stopped with its add-on servers, started again: until serve serves, and until the gateway answers a
// signed GET of an object stored before), and 1 MiB objects put and read one at a time through the
// gateway against `rados bench -t 1` on the gateway's own data pool (the raw tool under it).
//   npm run bench -- --only storage [--rounds 3] [--objects 40] [--cache-dir DIR]
// Needs root, sshd, Caddy, git and Ceph's packages (ceph-mon ceph-osd radosgw).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import aws4 from 'aws4';
import { BenchHost } from './host-lib.mjs';
import { median, target } from './lib.mjs';

export const title = "host: the storage add-ons' Ceph cluster (make, memory, cold start, objects against rados)";

const ORG = 'bench';

function missing() {
  if (process.getuid?.() !== 0) return 'runplan-host runs as root';
  for (const program of ['ceph-mon', 'ceph-osd', 'radosgw', 'rados', 'caddy', 'git']) if (spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0) return `${program} is not installed`;
  return '';
}

/** The PIDs of Ceph's daemons working under `dir`, by their working folder. */
function cephPids(dir) {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return /^(ceph-mon|ceph-osd|radosgw)$/.test(readFileSync(`/proc/${p}/comm`, 'utf8').trim()) && readlinkSync(`/proc/${p}/cwd`).startsWith(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

/** One S3 request signed with the add-on's variables: its status and body. */
function s3(v, method, path, body) {
  const [host, port] = v.STORAGE_ADDON_HOST.split(':');
  const signed = aws4.sign(
    { host: v.STORAGE_ADDON_HOST, service: 's3', region: 'us-east-1', method, path, body },
    { accessKeyId: v.STORAGE_ADDON_KEY_ID, secretAccessKey: v.STORAGE_ADDON_KEY_SECRET },
  );
  return new Promise((resolve, reject) => {
    const req = request({ host, port: Number(port), method, path, headers: signed.headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function run({ args }) {
  const why = missing();
  if (why) {
    console.log(`skipped: ${why}`);
    return;
  }
  const rounds = Number(args.rounds ?? 3);
  const objects = Number(args.objects ?? 40);
  const cacheDir = args['cache-dir'] ?? join(tmpdir(), 'runplan-test-cache');
  // The machine's network: this bench measures the store, not the releases' walls.
  const host = await BenchHost.create({ cacheDir, org: ORG, initArgs: ['--release-network', 'shared', '--disk-mb', '0'] });
  try {
    let t = performance.now();
    await host.cli(['addon', 'create', 'storage', 'files', '--org', ORG]);
    const firstMs = performance.now() - t;
    t = performance.now();
    await host.cli(['addon', 'create', 'storage', 'files-2', '--org', ORG]);
    const nextMs = performance.now() - t;
    const v = Object.fromEntries((await host.json(['addon', 'env', 'files', '--org', ORG, '--show'])).variables.map((x) => [x.name, x.value]));
    console.log(`first storage add-on (the cluster made): ${(firstMs / 1000).toFixed(1)} s; the next: ${(nextMs / 1000).toFixed(2)} s`);

    const dir = join(host.data, 'addons', 'storage', 'ceph');
    await new Promise((r) => setTimeout(r, 10_000));
    const idle = cephPids(dir).map(rssKb);
    const idleMb = idle.reduce((a, b) => a + b, 0) / 1024;
    console.log(`resident memory idle (monitor, OSD, gateway): ${idleMb.toFixed(0)} MiB (${idle.map((k) => (k / 1024).toFixed(0)).join(' + ')})`);
    target({ what: "storage add-ons: Ceph's daemons idle (MiB)", runplan: idleMb.toFixed(0), against: '200 MiB', limit: '≤ 200', met: idleMb <= 200 });

    if ((await s3(v, 'PUT', '/bench')).status !== 200) throw new Error('the bench bucket was not made');
    const kept = randomBytes(4096);
    if ((await s3(v, 'PUT', '/bench/kept', kept)).status !== 200) throw new Error('the kept object was not stored');
    const cold = [];
    for (let i = 0; i < rounds; i++) {
      await host.stop();
      if (cephPids(dir).length > 0) throw new Error('serve stopped and left a Ceph daemon running');
      const start = performance.now();
      await host.start();
      const serving = performance.now() - start;
      let answered;
      for (;;) {
        const got = await s3(v, 'GET', '/bench/kept').catch(() => ({ status: 0, body: Buffer.alloc(0) }));
        if (got.status === 200 && got.body.equals(kept)) {
          answered = performance.now() - start;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      cold.push({ serving, answered });
      console.log(`cold start ${i + 1}: serve serving after ${(serving / 1000).toFixed(1)} s, the object read back after ${(answered / 1000).toFixed(1)} s`);
    }
    const coldS = median(cold.map((c) => c.answered)) / 1000;
    target({ what: 'storage add-ons: serving again after serve starts (s)', runplan: coldS.toFixed(1), against: '15 s', limit: '≤ 15', met: coldS <= 15 });

    // 1 MiB objects one at a time through the gateway (signed HTTP, RGW's bookkeeping), against `rados bench`
    // writing and reading 1 MiB objects one at a time (-t 1) straight to the gateway's data pool: the store under it.
    const body = randomBytes(1 << 20);
    t = performance.now();
    for (let i = 0; i < objects; i++) if ((await s3(v, 'PUT', `/bench/o${i}`, body)).status !== 200) throw new Error('a PUT failed');
    const putMbs = objects / ((performance.now() - t) / 1000);
    t = performance.now();
    for (let i = 0; i < objects; i++) if ((await s3(v, 'GET', `/bench/o${i}`)).body.length !== body.length) throw new Error('a GET came back short');
    const getMbs = objects / ((performance.now() - t) / 1000);
    const conf = ['-c', join(dir, 'ceph.conf'), '-n', 'client.admin', '-k', join(dir, 'client.admin.keyring'), '-p', 'default.rgw.buckets.data'];
    const radosBench = (...more) => {
      const ran = spawnSync('rados', [...conf, 'bench', ...more], { encoding: 'utf8' });
      const mbs = Number(/Bandwidth \(MB\/sec\):\s+([\d.]+)/.exec(ran.stdout)?.[1]);
      if (!Number.isFinite(mbs)) throw new Error(`rados bench said nothing measurable: ${ran.stdout}${ran.stderr}`);
      return mbs;
    };
    const seconds = String(Math.max(3, Math.round(objects / Math.max(putMbs, 1))));
    const radosPut = radosBench(seconds, 'write', '-b', String(1 << 20), '-t', '1', '--no-cleanup');
    const radosGet = radosBench(seconds, 'seq', '-t', '1');
    spawnSync('rados', [...conf, 'cleanup'], { stdio: 'ignore' });
    console.log(
      `1 MiB objects one at a time: gateway put ${putMbs.toFixed(0)} MiB/s, read ${getMbs.toFixed(0)} MiB/s; rados bench -t 1 put ${radosPut.toFixed(0)} MB/s, read ${radosGet.toFixed(0)} MB/s; gateway / rados: put ${(putMbs / radosPut).toFixed(2)}×, read ${(getMbs / radosGet).toFixed(2)}×`,
    );
  } finally {
    await host.dispose([]);
  }
  console.log('reproduce: npm run bench -- --only storage');
}
