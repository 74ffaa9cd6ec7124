// Setup time and kernel memory of N release namespaces (veth onto a bridge, ReleaseNetworks of dist/), then the
// start time and memory of N pasta processes, each serving a namespace. Run as root: node bench/netns-setup-cost.mjs [N]
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
const { ReleaseNetworks } = await import(new URL('../dist/index.js', import.meta.url).href);
const N = Number(process.argv[2] ?? 20);
const meminfo = () =>
  Object.fromEntries(
    readFileSync('/proc/meminfo', 'utf8')
      .trim()
      .split('\n')
      .map((l) => {
        const [k, v] = l.split(':');
        return [k, Number.parseInt(v, 10)];
      }),
  );
const kernelKb = () => {
  const m = meminfo();
  return m.Slab + m.Percpu + (m.KernelStack ?? 0);
};
const nets = new ReleaseNetworks({ bridge: 'rpm0', gateway: '10.87.0.1', prefix: 24, table: 'runplan_measure' });
await nets.start();
const before = kernelKb();
const times = [];
const made = [];
for (let i = 0; i < N; i++) {
  const t = performance.now();
  made.push(await nets.create());
  times.push(performance.now() - t);
}
const after = kernelKb();
times.sort((a, b) => a - b);
console.log(`veth: ${N} namespaces, create median ${times[N >> 1].toFixed(1)} ms, max ${times[N - 1].toFixed(1)} ms; kernel memory +${((after - before) / N).toFixed(0)} kB each`);
const pastaTimes = [];
const rss = [];
const pids = [];
for (const ns of made) await ns.remove();
await nets.stop();
for (let i = 0; i < N; i++) {
  const ns = { name: `rpmp${i}`, path: `/run/netns/rpmp${i}` };
  const t = performance.now();
  execFileSync('ip', ['netns', 'add', ns.name]);
  spawnSync('pasta', ['--config-net', '-t', 'none', '-u', 'none', '-T', 'none', '-U', 'none', '--netns', ns.path, '--runas', '0', '-P', `/tmp/runplan-netns-pasta-${ns.name}.pid`, '-q']);
  pastaTimes.push(performance.now() - t);
  const pid = Number(readFileSync(`/tmp/runplan-netns-pasta-${ns.name}.pid`, 'utf8'));
  pids.push(pid);
  rss.push(Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))[1]));
}
pastaTimes.sort((a, b) => a - b);
rss.sort((a, b) => a - b);
console.log(`pasta: ${N} processes, start median ${pastaTimes[N >> 1].toFixed(1)} ms, max ${pastaTimes[N - 1].toFixed(1)} ms; PSS median ${rss[N >> 1]} kB`);
for (const pid of pids) process.kill(pid, 'SIGTERM');
for (let i = 0; i < N; i++) {
  execFileSync('ip', ['netns', 'del', `rpmp${i}`]);
  rmSync(`/tmp/runplan-netns-pasta-rpmp${i}.pid`, { force: true });
}
