import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { describeServiceManager, detectServiceManager } from '../src/service-manager.js';
import { ROOT, TestHost } from './helpers/test-host.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'host', 'dist', 'cli.js');

async function runplanHost(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** systemd's own check of a unit file: its syntax, every setting's value, and that ExecStart's program exists and is executable. */
async function systemdVerify(file: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('systemd-analyze', ['verify', file]);
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('runplan-host install-service: a systemd unit for serve', () => {
  it('writes a unit systemd-analyze verify accepts, for a data folder whose path needs quoting', async () => {
    const unitDir = await tempDir('runplan-host-units-');
    // A space, a specifier (%) and a variable ($): each would change the unit's meaning unquoted.
    const data = join(await tempDir('runplan-host-'), 'my data %n $HOME');
    const r = await runplanHost(['install-service', '--data', data, '--unit-dir', unitDir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('systemctl daemon-reload && systemctl enable --now runplan-host');
    const file = join(unitDir, 'runplan-host.service');
    const unit = await readFile(file, 'utf8');
    expect(unit).toMatch(/^KillMode=process$/m);
    expect(unit).toMatch(/^Restart=on-failure$/m);
    expect(unit).toMatch(/^After=network-online\.target$/m);
    expect(unit).toMatch(/^Wants=network-online\.target$/m);
    expect(unit).toMatch(/^LimitNOFILE=\d{5,}$/m);
    // systemd's quoting: % and $ doubled.
    const quoted = data.replace(/[%$]/g, (c) => c + c);
    expect(unit).toContain(`ExecStart="${join(ROOT, 'host', 'bin', 'runplan-host.js')}" serve --data "${quoted}"`);
    expect(unit).toContain(`Environment="RUNPLAN_HOST_DATA=${quoted}"`);
    const verified = await systemdVerify(file);
    expect(verified).toEqual({ code: 0, output: '' });
  });

  it("carries the machine's certificate authorities and proxies into the unit (a build's npm needs them), root's alone when a proxy holds a password", async () => {
    const unitDir = await tempDir('runplan-host-units-');
    const env = { NODE_EXTRA_CA_CERTS: '/etc/ssl/company-root.pem', HTTPS_PROXY: 'http://builder:s3cret@proxy.example:3128', PATH: '/usr/bin', NPM_TOKEN: 'npm_never' };
    const r = await run(process.execPath, [CLI, 'install-service', '--data', '/var/lib/runplan-host', '--unit-dir', unitDir], { env }).then(
      (out) => ({ code: 0, ...out }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );
    expect(r.code, r.stderr).toBe(0);
    const file = join(unitDir, 'runplan-host.service');
    const unit = await readFile(file, 'utf8');
    expect(unit).toContain('Environment="NODE_EXTRA_CA_CERTS=/etc/ssl/company-root.pem"');
    expect(unit).toContain('Environment="HTTPS_PROXY=http://builder:s3cret@proxy.example:3128"');
    expect(unit).not.toContain('NPM_TOKEN');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await systemdVerify(file)).toEqual({ code: 0, output: '' });
  });

  it('prints the unit with --print and writes nothing', async () => {
    const unitDir = await tempDir('runplan-host-units-');
    const r = await runplanHost(['install-service', '--data', '/var/lib/runplan-host', '--unit-dir', unitDir, '--print']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\[Service\]$/m);
    expect(r.stdout).toContain('ExecStart=');
    expect(await run('ls', ['-A', unitDir]).then((o) => o.stdout)).toBe('');
  });

  it('refuses a unit folder it cannot write, naming it (RUNPLAN_HOST_E_SERVICE_UNIT_DIR)', async () => {
    const notAFolder = join(await tempDir('runplan-host-units-'), 'a-file');
    await writeFile(notAFolder, '');
    const r = await runplanHost(['install-service', '--data', '/var/lib/runplan-host', '--unit-dir', notAFolder]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error RUNPLAN_HOST_E_SERVICE_UNIT_DIR: /m);
    expect(r.stderr).toContain(`file: ${notAFolder}`);
    const missing = await runplanHost(['install-service', '--unit-dir', join(notAFolder, '..', 'no-such-folder'), '--json']);
    expect(JSON.parse(missing.stdout).error.code).toBe('RUNPLAN_HOST_E_SERVICE_UNIT_DIR');
  });
});

describe('which service manager runs serve', () => {
  const invocation = '0123456789abcdef0123456789abcdef';

  it('is systemd when INVOCATION_ID is set, its unit read from the cgroup path', () => {
    expect(detectServiceManager({ INVOCATION_ID: invocation }, 'systemd', '0::/system.slice/runplan-host.service\n')).toEqual({ name: 'systemd', unit: 'runplan-host.service' });
    expect(detectServiceManager({ INVOCATION_ID: invocation }, 'systemd', '0::/user.slice\n')).toEqual({ name: 'systemd', unit: null });
  });

  it('is runit or s6 when its parent is runsv or s6-supervise, and none otherwise', () => {
    expect(detectServiceManager({}, 'runsv\n', '0::/\n')).toEqual({ name: 'runit', unit: 'runsv' });
    expect(detectServiceManager({}, 's6-supervise\n', '0::/\n')).toEqual({ name: 's6', unit: 's6-supervise' });
    expect(detectServiceManager({}, 'bash\n', '0::/\n')).toBeNull();
    expect(detectServiceManager({ INVOCATION_ID: 'not an id' }, 'bash\n', undefined)).toBeNull();
  });

  it('says that nothing restarts serve when none does', () => {
    expect(describeServiceManager(null)).toContain('not under a service manager: nothing restarts it after a crash or a reboot');
  });
});

describe('runplan-host status: what keeps serve running', () => {
  let host: TestHost;

  beforeAll(async () => {
    host = await TestHost.create();
  });
  afterAll(async () => {
    await host?.dispose();
  });

  it('says systemd when systemd started serve, which passes systemd’s variables to nothing it starts', async () => {
    // What systemd gives a service (systemd.exec(5), "Environment Variables in Spawned Processes").
    await host.serve({ env: { INVOCATION_ID: '0123456789abcdef0123456789abcdef', JOURNAL_STREAM: '8:12345', SYSTEMD_EXEC_PID: '1' } });
    const status = await host.cli(['status']);
    expect(status.stdout).toContain('serve runs under systemd');
    expect((await host.json<{ serviceManager: { name: string } }>(['status'])).serviceManager.name).toBe('systemd');
    // No second start in a clean environment: the process systemd started is serve itself (its main PID), and nothing it started has INVOCATION_ID.
    expect(host.serveOutput).not.toContain('clean environment');
    const recorded = JSON.parse(await readFile(join(host.data, 'run', 'serve.pid'), 'utf8')) as { pid: number };
    expect(recorded.pid).toBe(host.servePid);
    const environ = await readFile(`/proc/${host.servePid}/environ`, 'utf8');
    expect(environ).toContain('INVOCATION_ID=');
    const caddy = (await readFile(join(host.data, 'edge', 'caddy.pid'), 'utf8')).trim();
    expect(await readFile(`/proc/${caddy}/environ`, 'utf8')).not.toContain('INVOCATION_ID=');
    await host.stop();
  });

  it('says that nothing restarts serve when it was started by hand', async () => {
    await host.serve();
    const status = await host.cli(['status']);
    expect(status.stdout).toContain('serve is not under a service manager: nothing restarts it after a crash or a reboot');
    expect((await host.json<{ serviceManager: unknown }>(['status'])).serviceManager).toBeNull();
  });
});
