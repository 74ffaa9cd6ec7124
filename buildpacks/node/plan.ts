import type { PlanContext, PlanContribution } from '../../src/buildpack/contract.js';
import type { Decision, PlannedProcess } from '../../src/plan/schema.js';
import { DEFAULT_RESTART, DEFAULT_STOP_GRACE_MS } from '../../src/run/backoff.js';
import { readPackageJson } from './package-json.js';
import { resolveStart } from './resolve-start.js';

/** Node.js plan: install dependencies with npm, start with `npm start` or `node <main>`. */
export async function planNode({ files, env, host }: PlanContext): Promise<PlanContribution> {
  const pkg = await readPackageJson(files);
  const start = resolveStart(pkg);

  const nodeEnv = env.get('NODE_ENV');
  const mode: Decision = {
    id: 'node.mode',
    subject: 'Production mode',
    requested: nodeEnv ?? null,
    source: nodeEnv === undefined ? 'default' : `env NODE_ENV (${env.entry('NODE_ENV')?.source})`,
    resolved: nodeEnv === 'production' ? 'production' : 'not production',
    reason:
      nodeEnv === 'production'
        ? 'NODE_ENV=production enables production mode; npm skips devDependencies by default'
        : 'production mode needs NODE_ENV=production; without it npm installs devDependencies',
    overridden: [],
  };

  const runtime = {
    name: 'node',
    version: process.versions.node,
    distribution: 'host',
    decision: {
      id: 'node.version',
      subject: 'Node.js version',
      requested: pkg.engines?.node ?? null,
      source: pkg.engines?.node === undefined ? 'default' : 'package.json engines.node',
      resolved: process.versions.node,
      reason: "the Node.js that runs runplan on this host (this buildpack does not download Node versions)",
      overridden: [],
    },
  };

  const install = {
    name: 'install',
    description: 'install dependencies and run the install lifecycle scripts (build phase)',
    run: { kind: 'exec' as const, argv: ['npm', 'install'] },
    cwd: '.',
    env: {},
    pathPrepend: [],
    produces: ['node_modules'],
    layer: 'node_modules',
  };
  const verifyMain = start.mainFile === undefined
    ? []
    : [{
        name: 'verify-main',
        description: 'check that the file named by main exists once the build is done',
        run: { kind: 'action' as const, action: 'node/verify-main', params: { main: start.mainFile } },
        cwd: '.',
        env: {},
        pathPrepend: [],
        produces: [],
        layer: null,
      }];

  const web: PlannedProcess = {
    name: 'web',
    role: 'web',
    command: start.command,
    cwd: '.',
    env: {},
    pathPrepend: [],
    port: host.port,
    restart: DEFAULT_RESTART,
    stopGraceMs: DEFAULT_STOP_GRACE_MS,
  };

  return {
    runtimes: [runtime],
    decisions: [start.decision, mode],
    steps: [install, ...verifyMain],
    layers: [{ name: 'node_modules', path: 'node_modules', cacheKey: null, keyInputs: [], build: true, launch: true }],
    processes: [web],
    files: [],
    warnings: [],
  };
}
