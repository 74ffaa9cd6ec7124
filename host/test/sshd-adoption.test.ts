import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatIdentity, identifyProcess, isRunning, parseIdentity } from 'runplan/process';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../../test/helpers/processes.js';
import { freePort } from '../../test/helpers/ports.js';
import { tempDir } from '../../test/helpers/temp.js';
import { Sshd, type SshdOptions } from '../src/ssh/sshd.js';
import { ADOPTED_END } from '../src/supervision/adopted-process.js';
import { Supervisor } from '../src/supervision/supervisor.js';

// sshd runs as root (it changes to the SSH account per login); the account here only has to exist: nobody logs in.
const CAN_RUN = process.getuid?.() === 0 && existsSync('/usr/sbin/sshd');

async function sshdOptions(): Promise<SshdOptions> {
  const root = await tempDir('runplan-sshd-adopt-');
  const authorizedKeysFile = join(root, 'authorized_keys');
  writeFileSync(authorizedKeysFile, '', { mode: 0o644 });
  return { dir: join(root, 'ssh'), port: await freePort(), listenAddress: '127.0.0.1', user: 'nobody', authorizedKeysFile };
}

const identityIn = (sshd: Sshd) => parseIdentity(readFileSync(sshd.identityFile, 'utf8'));

describe.runIf(CAN_RUN)('Sshd outlives serve: the next serve adopts it when its configuration is the same (real sshd on 127.0.0.1)', () => {
  const cleanup: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('adopts the sshd an earlier serve let go when its config file is byte for byte this one, watches it by its identity, and stops it', async () => {
    const options = await sshdOptions();
    const first = new Sshd(options);
    const run = await first.start();
    // Once let go, first.stop() stops nothing: the test stops it itself if it fails before the adoption.
    const identity = identifyProcess(run.pid as number);
    cleanup.push(() => identity && isRunning(identity) && process.kill(identity.pid, 'SIGKILL'));
    expect(identityIn(first)).toEqual(identity);
    // Its log is a file of its own: nothing of it goes through serve, which may be gone.
    expect(readFileSync(first.logFile, 'utf8')).toContain(`Server listening on 127.0.0.1 port ${options.port}`);
    first.detach();
    const lines: string[] = [];
    const second = new Sshd({ ...options, log: (line) => lines.push(line) });
    cleanup.push(() => second.stop());
    const adopted = await second.start();
    expect(adopted.pid).toBe(run.pid);
    expect(second.pid).toBe(run.pid);
    expect(lines).toEqual([`sshd (PID ${run.pid}) an earlier serve left running is adopted: its configuration is this serve's`]);
    expect(await second.check()).toEqual({ up: true, detail: `answers SSH on 127.0.0.1:${options.port}` });
    process.kill(run.pid as number, 'SIGKILL');
    expect(await adopted.ended).toBe(ADOPTED_END);
    const again = await second.start();
    expect(again.pid).not.toBe(run.pid);
    await second.stop();
    expect(isAlive(again.pid as number)).toBe(false);
    for (const file of [second.pidFile, second.identityFile]) expect(existsSync(file), file).toBe(false);
  });

  it('stops (by its identity) an sshd left running whose config differs from the one this serve writes, and starts a new one', async () => {
    const options = await sshdOptions();
    const first = new Sshd(options);
    const run = await first.start();
    first.detach();
    const identity = identifyProcess(run.pid as number);
    cleanup.push(() => identity && isRunning(identity) && process.kill(identity.pid, 'SIGKILL'));
    const lines: string[] = [];
    // Another port: what `serve` would write after the settings changed.
    const second = new Sshd({ ...options, port: await freePort(), log: (line) => lines.push(line) });
    cleanup.push(() => second.stop());
    const started = await second.start();
    expect(started.pid).not.toBe(run.pid);
    expect(isAlive(run.pid as number)).toBe(false);
    expect(lines).toEqual([`sshd (PID ${run.pid}) an earlier serve left running is stopped, its configuration (${second.configFile}) is not the one this serve writes; a new one is started`]);
    expect((await second.check()).up).toBe(true);
  });

  it('starts a new sshd over a stale identity file, never signalling the process that holds its PID now', async () => {
    const options = await sshdOptions();
    const sshd = new Sshd(options);
    cleanup.push(() => sshd.stop());
    const other: ChildProcess = spawn('sleep', ['600'], { stdio: 'ignore' });
    cleanup.push(() => other.kill('SIGKILL'));
    await new Promise((resolve) => other.once('spawn', resolve));
    const otherIdentity = identifyProcess(other.pid as number);
    if (otherIdentity === undefined) throw new Error('the bystander has no identity');
    for (const identity of [{ ...otherIdentity, startTime: `${Number(otherIdentity.startTime) + 1}` }, otherIdentity]) {
      await sshd.start().then(() => sshd.stop());
      writeFileSync(sshd.identityFile, formatIdentity(identity));
      const started = await sshd.start();
      expect(started.pid).not.toBe(other.pid);
      expect(isRunning(otherIdentity)).toBe(true);
      expect(identityIn(sshd)?.pid).toBe(started.pid);
      await sshd.stop();
    }
  });

  it('stays up when the supervisor lets go of every part (detachAll), and is not started again when it dies later', async () => {
    const options = await sshdOptions();
    const lines: string[] = [];
    const supervisor = new Supervisor({ log: (line) => lines.push(line) });
    const sshd = new Sshd(options);
    const supervised = await supervisor.start(sshd);
    const pid = supervised.pid as number;
    const identity = identifyProcess(pid);
    cleanup.push(() => identity && isRunning(identity) && process.kill(identity.pid, 'SIGKILL'));
    supervisor.detachAll();
    expect(isAlive(pid)).toBe(true);
    expect(await supervisor.health()).toEqual([]);
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(lines).toEqual([]);
    expect(await sshd.check()).toMatchObject({ up: false });
  });
});
