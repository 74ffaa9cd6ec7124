import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { localRunDir } from '../../src/process/run-dir.js';
import { runCli, startCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { killAll, processesUnder, processesWithArgument } from '../helpers/processes.js';
import { deploymentDirs, tempDir } from '../helpers/temp.js';

/**
 * The bounds of code of someone else's in the run phase, through the real CLI
 * (issue 21): SIGTERM while a pre-run hook runs stops runplan, the hook's whole
 * tree and the run folder; --step-timeout bounds the pre-run, run-failed and
 * run-succeeded hooks as it bounds build steps.
 */

const SERVER = "require('node:http').createServer((q, s) => s.end('ok')).listen(+process.env.PORT, '0.0.0.0');";

async function app(): Promise<string> {
  const dir = await tempDir('runplan-app-');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'bounds', version: '1.0.0', main: 'server.js' }));
  await writeFile(join(dir, 'server.js'), SERVER);
  await writeFile(join(dir, '.gitignore'), '/node_modules\n');
  return dir;
}

/** A hook that prints a line, then waits in a child and a grandchild carrying `marker`. */
const hangingHook = (marker: string) => `echo hook started; sh -c 'sleep 300' ${marker} & sleep 300 & wait`;
const buildDir = (output: string) => /==> build succeeded: (\S+)/.exec(output)?.[1] as string;

describe('a pre-run hook, bounded', () => {
  it('SIGTERM while it runs stops runplan (exit 130), the hook with everything it started, and removes the run folder and the build', async () => {
    const marker = `runplan-pre-run-${process.pid}-${Date.now()}`;
    onTestFinished(() => killAll(processesWithArgument(marker)));
    const dirs = await deploymentDirs();
    const run = startCli(['run', await app(), '--port', String(await freePort()), '--env', `CC_PRE_RUN_HOOK=${hangingHook(marker)}`], dirs.env);
    await run.waitFor('[pre-run-hook] hook started');
    const deadline = Date.now() + 10_000;
    while (processesWithArgument(marker).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    run.child.kill('SIGTERM');
    expect(await run.exited, run.output()).toBe(130);
    expect(run.output()).toContain('==> interrupted by SIGTERM; nothing left running');
    expect(processesWithArgument(marker)).toEqual([]);
    expect(processesUnder(dirs.workDir)).toEqual([]);
    // The build is named in the application's terms (builds/<id>), inside its workspace.
    const [workspace] = await readdir(dirs.workDir);
    expect(existsSync(localRunDir(join(dirs.workDir, workspace as string, buildDir(run.output()))))).toBe(false);
    // The deployment was stopped, it did not fail: no run-failed hook, no build left.
    expect(run.output()).not.toContain('run-failed-hook');
    expect(await readdir(join(dirs.workDir, workspace as string, 'builds'))).toEqual([]);
  });

  it('--step-timeout stops a pre-run hook that hangs, fails the deployment naming it, and bounds the run-failed hook too', async () => {
    const marker = `runplan-pre-run-timeout-${process.pid}-${Date.now()}`;
    onTestFinished(() => killAll(processesWithArgument(marker)));
    const dirs = await deploymentDirs();
    const { code, output, stderr } = await runCli(
      ['run', await app(), '--port', String(await freePort()), '--step-timeout', '10', '--env', `CC_PRE_RUN_HOOK=${hangingHook(marker)}`, '--env', `CC_RUN_FAILED_HOOK=${hangingHook(marker)}`],
      dirs.env,
    );
    expect(code, output).toBe(1);
    expect(stderr).toMatch(/error RUNPLAN_E_BUILD_STEP_TIMEOUT: step "pre-run-hook" \(.*\) did not finish within 10 s and was stopped with every process it started\./);
    expect(output).toMatch(/RUNPLAN_W_HOOK_FAILED: RUNPLAN_E_BUILD_STEP_TIMEOUT: step "run-failed-hook" \(.*\) did not finish within 10 s .* The deployment failed all the same\./);
    expect(output).not.toContain('started web');
    expect(processesWithArgument(marker)).toEqual([]);
    expect(processesUnder(dirs.workDir)).toEqual([]);
  });
});

describe('a run-succeeded hook, bounded', () => {
  it('--step-timeout stops it; the deployment stays healthy with RUNPLAN_W_HOOK_FAILED', async () => {
    const marker = `runplan-succeeded-${process.pid}-${Date.now()}`;
    onTestFinished(() => killAll(processesWithArgument(marker)));
    const dirs = await deploymentDirs();
    const run = startCli(['run', await app(), '--port', String(await freePort()), '--step-timeout', '10', '--env', `CC_RUN_SUCCEEDED_HOOK=${hangingHook(marker)}`], dirs.env);
    await run.waitFor('==> deployment healthy');
    expect(run.output()).toMatch(/RUNPLAN_W_HOOK_FAILED: RUNPLAN_E_BUILD_STEP_TIMEOUT: step "run-succeeded-hook" .* The deployment succeeded all the same\./);
    expect(processesWithArgument(marker)).toEqual([]);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(processesUnder(dirs.workDir)).toEqual([]);
  });
});
