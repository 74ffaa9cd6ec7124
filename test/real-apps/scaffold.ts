import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as kit from '../../scripts/fixture-kit.mjs';
import type { RealApp, ScaffoldStep } from './corpus.js';

/** A scaffolded app in the test cache. */
export interface ScaffoldedApp {
  /** The app's folder: never deployed as it is (the test deploys a copy). */
  readonly dir: string;
  /** How long making it took, when it was made. */
  readonly scaffoldMs: number;
  /** false: made by an earlier run, reused. */
  readonly made: boolean;
}

/** A scaffolding command may download its package and resolve a lock file: long, but bounded. */
const STEP_TIMEOUT_MS = 10 * 60_000;

/** What the finished folder records; its presence says the scaffold completed. */
const DONE_FILE = 'scaffold.json';

/**
 * The app of `entry`, made once and kept in `<cacheDir>/real-apps/<id>-<key>/app`
 * (a mistake's entry uses the folder of the app it deploys).
 * The key covers the entry's scaffold (pinned versions, files, commands) and the
 * versions of the machine tools it uses, so a second run reuses the folder and a
 * change of either makes it again (and removes the older folders of that app).
 * Made in a partial folder renamed at the end: an interrupted scaffold is never reused.
 */
export async function scaffoldedApp(entry: RealApp, cacheDir: string): Promise<ScaffoldedApp> {
  const steps = kit.fillPlaceholders(entry.scaffold, placeholder) as readonly ScaffoldStep[];
  const tools = entry.machineTools.map((argv) => `${argv.join(' ')}: ${execFileSync(argv[0] as string, argv.slice(1), { encoding: 'utf8' }).trim()}`);
  const key = createHash('sha256').update(JSON.stringify({ steps, tools })).digest('hex').slice(0, 16);
  const root = join(cacheDir, 'real-apps');
  const name = entry.mistake?.scaffoldOf ?? entry.id;
  const folder = join(root, `${name}-${key}`);
  if (existsSync(join(folder, DONE_FILE))) {
    const record = JSON.parse(await readFile(join(folder, DONE_FILE), 'utf8')) as { scaffoldMs: number };
    return { dir: join(folder, 'app'), scaffoldMs: record.scaffoldMs, made: false };
  }
  await mkdir(root, { recursive: true });
  await removeOtherVersions(root, name, folder);
  const partial = `${folder}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial);
  const started = Date.now();
  const app = join(partial, 'app');
  // Scaffolders leave files in TMPDIR (create-next-app its update check): theirs is inside the partial folder.
  const tmp = join(partial, 'tmp');
  await mkdir(tmp);
  for (const step of steps) await runStep(step, partial, app, tmp);
  await rm(tmp, { recursive: true, force: true });
  const scaffoldMs = Date.now() - started;
  await writeFile(join(partial, DONE_FILE), `${JSON.stringify({ id: name, tools, scaffoldMs, madeAt: new Date().toISOString() }, null, 2)}\n`);
  await rm(folder, { recursive: true, force: true });
  await rename(partial, folder);
  return { dir: join(folder, 'app'), scaffoldMs, made: true };
}

/** This machine's versions (fixture-kit), and the registry npm is configured with: never written in the corpus. */
function placeholder(name: string): string | undefined {
  if (name === 'NPM_REGISTRY') return execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
  return kit.machinePlaceholder(name);
}

async function runStep(step: ScaffoldStep, parent: string, app: string, tmp: string): Promise<void> {
  if ('write' in step) {
    for (const [path, content] of Object.entries(step.write)) {
      await mkdir(dirname(join(app, path)), { recursive: true });
      await writeFile(join(app, path), content);
    }
  } else if ('remove' in step) {
    for (const path of step.remove) await rm(join(app, path), { recursive: true, force: true });
  } else {
    const cwd = step.in === 'parent' ? parent : app;
    await mkdir(cwd, { recursive: true });
    await command(step.run, cwd, { ...step.env, TMPDIR: tmp });
  }
}

/** Runs one scaffolding command with no input (a prompt fails instead of waiting); its output is shown only when it fails. */
function command(argv: readonly string[], cwd: string, env: Readonly<Record<string, string>>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd,
      env: { ...process.env, ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), STEP_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`scaffolding command failed (${signal ?? `exit ${code}`}) in ${cwd}: ${argv.join(' ')}\n${output.slice(-4000)}`));
    });
  });
}

/** Older scaffolds of the same app (other versions or machine tools) and partial folders left by an interrupted run. */
async function removeOtherVersions(root: string, id: string, keep: string): Promise<void> {
  const pattern = new RegExp(`^${id}-[0-9a-f]{16}(\\.partial-\\d+)?$`);
  for (const name of await readdir(root)) {
    if (pattern.test(name) && join(root, name) !== keep) await rm(join(root, name), { recursive: true, force: true });
  }
}
