import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProcessTree, signalTree, treeAlive } from '../../src/process/process-tree.js';

const started: number[] = [];

function sleeper(): Promise<number> {
  const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  child.unref();
  return new Promise((resolve, reject) => {
    child.once('spawn', () => {
      started.push(child.pid as number);
      resolve(child.pid as number);
    });
    child.once('error', reject);
  });
}

const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterEach(() => {
  for (const pid of started.splice(0)) if (running(pid)) process.kill(-pid, 'SIGKILL');
});

describe('a process tree whose group was seen empty', () => {
  it('never signals that group number again: once the kernel hands the PID to a new process group (PID reuse), the stranger is left alone', async () => {
    const gone = await sleeper();
    process.kill(-gone, 'SIGKILL');
    while (running(gone)) await new Promise((r) => setTimeout(r, 10));
    // The group number the tree holds, then the same number given to another group, as reuse would.
    let pgid = gone;
    const tree: ProcessTree = {
      get pgid() {
        return pgid;
      },
      tag: 'no-process-carries-this-tag',
    };
    expect(treeAlive(tree)).toBe(false);
    const stranger = await sleeper();
    pgid = stranger;
    expect(treeAlive(tree)).toBe(false);
    expect(signalTree(tree, 'SIGTERM')).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(running(stranger)).toBe(true);
  });

  it('is signalled while its group has members', async () => {
    const leader = await sleeper();
    const tree: ProcessTree = { pgid: leader, tag: 'no-process-carries-this-tag' };
    expect(treeAlive(tree)).toBe(true);
    expect(signalTree(tree, 'SIGKILL')).toBe(true);
    for (let i = 0; i < 100 && treeAlive(tree); i++) await new Promise((r) => setTimeout(r, 20));
    expect(treeAlive(tree)).toBe(false);
  });
});
