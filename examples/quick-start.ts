// runplan's quick start: plan an application, read why each choice was made, then build it,
// start it, health-check it, ask it something and stop it. Run it from a project where runplan
// is installed (README.md, "Use runplan in your project"), as root or as any user:
//   node quick-start.js <app folder> [port]
// runplan's cache is the CLI's: $RUNPLAN_CACHE_DIR, else /var/cache/runplan as root and
// ~/.cache/runplan ($XDG_CACHE_HOME/runplan) otherwise; builds go under it unless
// $RUNPLAN_WORK_DIR says where. The first run downloads the application's Node.js there.
import { createPlan, defaultRegistry, deployApp, planDigest } from 'runplan';

const appDir = process.argv[2] ?? '.';
const port = Number(process.argv[3] ?? 8080);
const registry = defaultRegistry();
const options = {
  registry,
  appDir,
  env: { application: { NODE_ENV: 'production', CC_HEALTH_CHECK_PATH: '/' } },
  host: { port, instance: { cpus: 1, memoryMb: 1024 } },
};

// Plan: which buildpack, which runtime and why, the build steps, the processes, the health check.
const { plan } = await createPlan(options);
for (const d of plan.decisions) console.log(`${d.subject}: ${d.resolved} (${d.reason})`);
console.log(`plan ${planDigest(plan)}`);

// Carry out that very plan: build in a fresh copy, start, and pass the health check, or throw a coded error.
const deployment = await deployApp({ ...options, plan, sink: (line) => console.log(line.text) });
try {
  console.log(`healthy: ${deployment.health.results.map((r) => `GET ${r.path} ${r.status}`).join(', ')}`);
  const answer = await fetch(`http://127.0.0.1:${port}/`);
  console.log(`GET / answered ${answer.status}`);
} finally {
  await deployment.stop();
}
