import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { listeningSockets, procAddress, processTree, whereItListens } from '../../src/health/process-sockets.js';

// Issue 36, item 3: "not listening" said nothing of where the application did listen (NestJS's and Hono's 3000).
describe('the sockets an application process tree listens on', () => {
  const started: ChildProcess[] = [];
  afterEach(() => {
    for (const child of started.splice(0)) if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  });

  /** Starts `sh -c script` in a session of its own, as runplan starts a process; resolves once it printed a line. */
  const start = async (script: string): Promise<{ pid: number; line: string }> => {
    const child = spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    started.push(child);
    const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
    return { pid: child.pid as number, line: chunk.toString().trim() };
  };
  const server = (host: string) => `${process.execPath} -e 'require("net").createServer().listen(0, "${host}", function () { console.log(this.address().port) })'`;

  it("finds the port a wrapper's descendant listens on (a sandbox's pid is the wrapper's), with its address and process", async () => {
    // sh stays the parent (a second command follows), as a sandbox's wrapper would.
    const { pid, line } = await start(`${server('0.0.0.0')}; true`);
    const sockets = await listeningSockets([pid]);
    expect(sockets).toEqual([{ address: '0.0.0.0', port: Number(line), pid: expect.any(Number), command: 'node' }]);
    expect(sockets?.[0]?.pid).not.toBe(pid);
    const where = whereItListens(sockets ?? [], [pid], 8080, 'node');
    expect(where.message).toBe(`; the application's processes listen on 0.0.0.0:${line} (node, pid ${sockets?.[0]?.pid}) instead`);
    expect(where.fix).toContain('Listen on 0.0.0.0 at the port in PORT (8080 here), not a fixed one: read it from process.env.PORT');
  });

  it('finds it inside a bubblewrap sandbox with its own PID namespace, as runplan-host runs an application', async () => {
    const bwrap = ['--unshare-pid', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--'];
    const { pid, line } = await start(`exec bwrap ${bwrap.join(' ')} ${server('0.0.0.0')}`);
    const sockets = await listeningSockets([pid]);
    expect(sockets).toEqual([{ address: '0.0.0.0', port: Number(line), pid: expect.any(Number), command: 'node' }]);
    expect(sockets?.[0]?.pid).not.toBe(pid);
  });

  it('reads loopback and IPv6 listeners, and none for a process that opened no socket', async () => {
    const loopback = await start(`exec ${server('::1')}`);
    expect(await listeningSockets([loopback.pid])).toEqual([{ address: '::1', port: Number(loopback.line), pid: loopback.pid, command: 'node' }]);
    const idle = await start('echo started; exec sleep 30');
    expect(await listeningSockets([idle.pid])).toEqual([]);
    // The right port on the loopback interface only: in its own network namespace, nothing but its own sockets tells it.
    const bound = whereItListens([{ address: '127.0.0.1', port: 8080, pid: idle.pid, command: 'node' }], [idle.pid], 8080, 'node');
    expect(bound).toMatchObject({ loopbackOnly: true, message: expect.stringContaining('127.0.0.1:8080 (node'), fix: expect.stringContaining('Listen on 0.0.0.0 (all interfaces)') });
    expect(whereItListens([{ address: '::', port: 8080, pid: idle.pid, command: 'node' }], [idle.pid], 8080, 'node').loopbackOnly).toBeUndefined();
    expect(whereItListens([], [idle.pid], 8080, 'ruby')).toEqual({
      message: `; the application's processes (pid ${idle.pid}) listen on no TCP port`,
      fix: expect.stringContaining('Start a web server that listens on 0.0.0.0 at the port in PORT (8080 here): read it from ENV["PORT"]'),
    });
  });

  it('takes the descendants and the sessions the roots lead, not their parents or neighbours', () => {
    const stats = [
      { pid: 1, ppid: 0, session: 1 },
      { pid: 10, ppid: 1, session: 10 },
      { pid: 11, ppid: 10, session: 10 },
      { pid: 12, ppid: 11, session: 10 },
      { pid: 13, ppid: 1, session: 10 },
      { pid: 20, ppid: 1, session: 20 },
    ];
    expect([...processTree([10], stats)].sort((a, b) => a - b)).toEqual([10, 11, 12, 13]);
    expect([...processTree([99], stats)]).toEqual([]);
  });

  it('writes the addresses of /proc/net/tcp{,6} as people do', () => {
    expect(procAddress('0100007F')).toBe('127.0.0.1');
    expect(procAddress('00000000')).toBe('0.0.0.0');
    expect(procAddress('00000000000000000000000000000000')).toBe('::');
    expect(procAddress('00000000000000000000000001000000')).toBe('::1');
    expect(procAddress('0000000000000000FFFF00000100007F')).toBe('::ffff:127.0.0.1');
  });
});
