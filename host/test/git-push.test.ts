import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/helpers/ports.js';
import { isAlive } from '../../test/helpers/processes.js';
import { tempDir } from '../../test/helpers/temp.js';
import { HostErrors } from '../src/errors.js';
import { gitShellCommand, procReceiveHookCommand } from '../src/git/commands.js';
import { AUTHORIZE_PATH, EXIT_LINE_PREFIX, PUSH_PATH, type PushRequest } from '../src/git/hook-protocol.js';
import { moveMaster } from '../src/git/master-ref.js';
import { ensureRepository } from '../src/git/repositories.js';
import { hostPaths } from '../src/paths.js';
import { authorizedKeysText, parsePublicKey, writeAuthorizedKeys } from '../src/ssh/authorized-keys.js';
import { Sshd } from '../src/ssh/sshd.js';
import { ensureSshUser, removeSshUser } from '../src/ssh/ssh-user.js';
import type { SshKeyRecord } from '../src/store/store.js';

// The host's sshd logs in as a system account it may create: root only, as the host runs.
const CAN_RUN = process.getuid?.() === 0 && existsSync('/usr/sbin/sshd') && existsSync('/usr/bin/git');
/** A test-only account (the host's is `git`): nothing here needs that name. */
const USER = 'rph-git';

const ACME_APP = `app_${randomUUID()}`;
const OTHER_APP = `app_${randomUUID()}`;
const MISSING_APP = `app_${randomUUID()}`;
const ALICE = 'key_a11ce0000001'; // of orga_acme
const BOB = 'key_b0b000000002'; // of orga_other
const ORG_OF_APP: Record<string, string> = { [ACME_APP]: 'orga_acme', [OTHER_APP]: 'orga_other' };
const ORG_OF_KEY: Record<string, string> = { [ALICE]: 'orga_acme', [BOB]: 'orga_other' };

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'dev',
  GIT_AUTHOR_EMAIL: 'dev@example.invalid',
  GIT_COMMITTER_NAME: 'dev',
  GIT_COMMITTER_EMAIL: 'dev@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runProgram(program: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(program, args, { ...options, env: { ...process.env, ...GIT_ENV, ...options.env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
    child.stdin?.end();
  });
}

/** The pushes the stand-in serve received, newest last. */
const received: PushRequest[] = [];
/** Whether the stand-in drops the next push's connection after its first line. */
let crashNext = false;

/**
 * A stand-in for `runplan-host serve`'s side of the git socket: /authorize from a
 * table (a key may push to its organization's applications), /push reads the
 * pushed commit in the repository (git archive, as root; the proc-receive hook
 * runs once git has moved the objects in) and streams its file names, then the
 * exit line: 1 when the commit holds a file FAIL, else 0 once it moved master as
 * serve does (as the repository's owner).
 */
function standInServe(socket: string, repository: (app: string) => string, owner: () => { uid: number; gid: number }): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://git.sock');
    if (req.method === 'GET' && url.pathname === AUTHORIZE_PATH) {
      const app = url.searchParams.get('app') ?? '';
      const key = url.searchParams.get('key') ?? '';
      res.writeHead(ORG_OF_APP[app] !== undefined && ORG_OF_APP[app] === ORG_OF_KEY[key] ? 200 : 403).end();
      return;
    }
    if (req.method !== 'POST' || url.pathname !== PUSH_PATH) {
      res.writeHead(404).end();
      return;
    }
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const push = JSON.parse(body) as PushRequest;
      received.push(push);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(`deploying ${push.newCommit.slice(0, 7)} of ${push.app}\n`);
      if (crashNext) {
        // serve dies mid-deploy: the connection drops with no exit line.
        crashNext = false;
        setTimeout(() => res.socket?.destroy(), 100);
        return;
      }
      const archive = spawn('git', ['-c', 'safe.directory=*', '--git-dir', repository(push.app), 'archive', '--format=tar', push.newCommit], { stdio: ['ignore', 'pipe', 'pipe'] });
      const list = spawn('tar', ['-t'], { stdio: ['pipe', 'pipe', 'ignore'] });
      archive.stdout.pipe(list.stdin);
      let errors = '';
      archive.stderr.on('data', (chunk: Buffer) => {
        errors += chunk.toString();
      });
      let files = '';
      list.stdout.on('data', (chunk: Buffer) => {
        files += chunk.toString();
      });
      list.on('close', async () => {
        const names = files.split('\n').filter((name) => name !== '');
        for (const name of names) res.write(`file: ${name}\n`);
        if (errors !== '') res.write(`git archive: ${errors.trim()}\n`);
        const failed = names.includes('FAIL') || names.length === 0;
        if (failed) res.write('deploy failed on purpose\n');
        else await moveMaster({ path: repository(push.app), owner: owner() }, { from: push.oldCommit, to: push.newCommit, release: received.length });
        res.end(`${EXIT_LINE_PREFIX}${failed ? 1 : 0}\n`);
      });
    });
  }).listen(socket);
}

describe.skipIf(!CAN_RUN)('git push over the host sshd', () => {
  let root: string;
  let data: string;
  let paths: ReturnType<typeof hostPaths>;
  let sshd: Sshd;
  let serve: Server | undefined;
  let port: number;
  let owner: { uid: number; gid: number };
  let createdUser = false;
  let clientDir: string;
  let work: string;
  const keyFile = (name: 'alice' | 'bob') => join(clientDir, name);
  const sshArgs = (name: 'alice' | 'bob', logLevel = 'ERROR') => [
    '-i',
    keyFile(name),
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    `UserKnownHostsFile=${join(clientDir, 'known_hosts')}`,
    '-o',
    'StrictHostKeyChecking=accept-new',
    '-o',
    'BatchMode=yes',
    '-o',
    `LogLevel=${logLevel}`,
    '-p',
    String(port),
  ];
  const remote = (app: string) => `git+ssh://${USER}@127.0.0.1:${port}/${app}.git`;
  const git = (args: string[], as: 'alice' | 'bob' = 'alice', cwd = work) => runProgram('git', args, { cwd, env: { GIT_SSH_COMMAND: ['ssh', ...sshArgs(as)].join(' ') } });
  const bareHead = (app: string, ref = 'refs/heads/master') =>
    runProgram('git', ['-c', 'safe.directory=*', '--git-dir', join(paths.gitDir, `${app}.git`), 'rev-parse', '--verify', '-q', ref]).then((run) => run.stdout.trim());
  const localHead = async () => (await runProgram('git', ['rev-parse', 'HEAD'], { cwd: work })).stdout.trim();
  const commit = async (file: string, content: string) => {
    await writeFile(join(work, file), content);
    await runProgram('git', ['add', '-A'], { cwd: work });
    await runProgram('git', ['commit', '-q', '-m', `add ${file}`], { cwd: work });
  };

  beforeAll(async () => {
    root = await tempDir('runplan-host-git-');
    data = join(root, 'data');
    paths = hostPaths(data);
    // The data folder as the host lays it out: root's, searchable by the SSH user where it must reach.
    await mkdir(data, { mode: 0o711 });
    await mkdir(paths.sshDir, { mode: 0o755 });
    await mkdir(paths.runDir, { mode: 0o711 });
    // A leftover of an interrupted run would keep its old home; this name is the tests' own.
    await removeSshUser(USER);
    // Its home is the folder of authorized_keys: StrictModes stops there instead of refusing /tmp (world-writable) above it.
    const user = await ensureSshUser(USER, paths.sshDir);
    createdUser = user.created;
    owner = { uid: user.uid, gid: user.gid };

    // The forced command and the hook, bundled into one program the SSH user can read and run.
    const bin = join(root, 'bin');
    await mkdir(bin, { mode: 0o755 });
    const program = join(bin, 'runner.mjs');
    await build({
      entryPoints: [join(import.meta.dirname, 'git-push-runner.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: program,
      logLevel: 'error',
      // Bundled CommonJS dependencies require node's modules.
      banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    });
    await chmod(program, 0o644);
    const node = process.execPath;

    clientDir = join(root, 'client');
    await mkdir(clientDir, { mode: 0o700 });
    const keys: SshKeyRecord[] = [];
    for (const [name, id] of [
      ['alice', ALICE],
      ['bob', BOB],
    ] as const) {
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${name}@laptop`, '-f', keyFile(name)]);
      const parsed = parsePublicKey(await readFile(`${keyFile(name)}.pub`, 'utf8'), `${name}.pub`);
      keys.push({ id, org: ORG_OF_KEY[id] as string, ...parsed, addedAt: '2026-11-26T00:00:00Z' });
    }
    await writeAuthorizedKeys(
      paths.authorizedKeys,
      authorizedKeysText(keys, (id) => gitShellCommand([node, program], id, data)),
    );

    const hook = procReceiveHookCommand([node, program], data);
    for (const app of [ACME_APP, OTHER_APP]) await ensureRepository(paths.gitDir, app, hook, owner);

    serve = standInServe(
      paths.gitSocket,
      (app) => join(paths.gitDir, `${app}.git`),
      () => owner,
    );
    await new Promise((resolve) => serve?.once('listening', resolve));
    // The SSH user's alone (serve runs as root).
    await chown(paths.gitSocket, owner.uid, owner.gid);
    await chmod(paths.gitSocket, 0o600);

    port = await freePort();
    sshd = new Sshd({ dir: paths.sshDir, port, listenAddress: '127.0.0.1', user: USER, authorizedKeysFile: paths.authorizedKeys });
    await sshd.start();

    work = join(root, 'work');
    await mkdir(work);
    await runProgram('git', ['init', '-q', '-b', 'master'], { cwd: work });
    await commit('index.js', 'console.log("hello")\n');
  }, 120_000);

  afterAll(async () => {
    await sshd?.stop();
    await new Promise((resolve) => (serve?.listening ? serve.close(resolve) : resolve(undefined)));
    if (createdUser) await removeSshUser(USER);
  });

  it('makes each repository the SSH user’s alone, with a root-owned hook, and keeps it so when ensured again', async () => {
    await ensureRepository(paths.gitDir, ACME_APP, procReceiveHookCommand([process.execPath, join(root, 'bin', 'runner.mjs')], data), owner);
    // Another account (runplan's app user as much as nobody) can neither list nor read it.
    const other = await runProgram('runuser', ['-u', 'nobody', '--', 'ls', join(paths.gitDir, `${ACME_APP}.git`)]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/Permission denied/);
    const config = await stat(join(paths.gitDir, `${ACME_APP}.git`, 'config'));
    expect([config.uid, config.mode & 0o777]).toEqual([0, 0o644]);
    const repository = await stat(join(paths.gitDir, `${ACME_APP}.git`));
    expect(repository.uid).toBe(owner.uid);
    expect(repository.mode & 0o777).toBe(0o700);
    expect((await stat(paths.gitDir)).mode & 0o777).toBe(0o711);
    const hook = await stat(join(paths.gitDir, `${ACME_APP}.git`, 'hooks', 'proc-receive'));
    expect([hook.uid, hook.mode & 0o777]).toEqual([0, 0o755]);
    const keysFile = await stat(paths.authorizedKeys);
    expect([keysFile.uid, keysFile.mode & 0o777]).toEqual([0, 0o644]);
  });

  it('accepts a push of master: the hook streams serve’s lines as remote: …, and master moves as serve moved it', async () => {
    const pushed = await git(['push', remote(ACME_APP), 'master']);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stderr).toContain(`remote: deploying ${(await localHead()).slice(0, 7)} of ${ACME_APP}`);
    expect(pushed.stderr).toContain('remote: file: index.js');
    expect(await bareHead(ACME_APP)).toBe(await localHead());
    expect(await readFile(join(clientDir, 'known_hosts'), 'utf8')).toContain(await sshd.publicHostKey());
    const push = received.at(-1);
    expect(push).toMatchObject({ app: ACME_APP, key: ALICE, ref: 'refs/heads/master', oldCommit: '0'.repeat(40), newCommit: await localHead() });
  });

  it('rejects the push when serve answers a non-zero status: [remote rejected], master does not move', async () => {
    const before = await bareHead(ACME_APP);
    await commit('FAIL', 'this deploy fails\n');
    const pushed = await git(['push', remote(ACME_APP), 'master']);
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain('remote: file: FAIL');
    expect(pushed.stderr).toContain('remote: deploy failed on purpose');
    expect(pushed.stderr).toMatch(/\[remote rejected\] master -> master \(not deployed\)/);
    expect(await bareHead(ACME_APP)).toBe(before);
    await runProgram('git', ['reset', '-q', '--hard', 'HEAD~1'], { cwd: work });
  });

  it('rejects the push when serve drops the connection mid-deploy', async () => {
    const before = await bareHead(ACME_APP);
    await commit('crash.js', 'crash\n');
    crashNext = true;
    const pushed = await git(['push', remote(ACME_APP), 'master']);
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain(`remote: deploying ${(await localHead()).slice(0, 7)}`);
    expect(pushed.stderr).toContain('remote: runplan-host serve stopped answering before the deploy ended; the push is rejected.');
    expect(pushed.stderr).toMatch(/\[remote rejected\] master -> master/);
    expect(await bareHead(ACME_APP)).toBe(before);
    await runProgram('git', ['reset', '-q', '--hard', 'HEAD~1'], { cwd: work });
  });

  it('refuses another branch with a line that names master and how to push to it', async () => {
    const pushed = await git(['push', remote(ACME_APP), 'master:feature']);
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain(`remote: ${HostErrors.PUSH_BRANCH.code}: refs/heads/feature was not pushed: only the master branch deploys; push to master with git push <remote> feature:master`);
    expect(pushed.stderr).toContain(`[remote rejected] master -> feature (${HostErrors.PUSH_BRANCH.code})`);
    expect(await bareHead(ACME_APP, 'refs/heads/feature')).toBe('');
    // Nor may master be deleted, though git hands the deletion to the hook too.
    const deleted = await git(['push', remote(ACME_APP), ':master']);
    expect(deleted.stderr).toContain(`remote: ${HostErrors.PUSH_BRANCH.code}: master cannot be deleted`);
    expect(await bareHead(ACME_APP)).toBe(await localHead());
  });

  it('refuses a key of another organization and an application that does not exist with the same words', async () => {
    const other = await git(['push', remote(ACME_APP), 'master'], 'bob');
    const missing = await git(['push', remote(MISSING_APP), 'master'], 'bob');
    expect(other.code).not.toBe(0);
    expect(missing.code).not.toBe(0);
    const line = (run: Run) => run.stderr.split('\n').find((text) => text.includes(HostErrors.PUSH_DENIED.code)) ?? run.stderr;
    expect(line(other)).toContain(`${HostErrors.PUSH_DENIED.code}: the key ${BOB} may not push to ${ACME_APP}`);
    expect(line(missing).replace(MISSING_APP, ACME_APP)).toBe(line(other));
    expect(existsSync(join(paths.gitDir, `${MISSING_APP}.git`))).toBe(false);
    // Bob's own application takes his pushes.
    const own = await git(['push', remote(OTHER_APP), 'master'], 'bob');
    expect(own.code, own.stderr).toBe(0);
  });

  it('reads the keys at each login: a key removed from authorized_keys gets in no more', async () => {
    const before = await readFile(paths.authorizedKeys, 'utf8');
    try {
      await writeAuthorizedKeys(paths.authorizedKeys, '');
      const pushed = await git(['push', remote(ACME_APP), 'master']);
      expect(pushed.code).not.toBe(0);
      expect(pushed.stderr).toMatch(/Permission denied \(publickey\)/);
    } finally {
      await writeAuthorizedKeys(paths.authorizedKeys, before);
    }
  });

  it('gives no shell and runs no other command: one line each', async () => {
    const shell = await runProgram('ssh', [...sshArgs('alice'), `${USER}@127.0.0.1`]);
    const command = await runProgram('ssh', [...sshArgs('alice'), `${USER}@127.0.0.1`, 'ls', '/']);
    for (const run of [shell, command]) {
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      const ours = run.stderr.split('\n').filter((line) => line.includes('RUNPLAN_HOST_E_'));
      expect(ours).toHaveLength(1);
      expect(ours[0]).toContain(`${HostErrors.SSH_COMMAND_REFUSED.code}: `);
    }
    expect(shell.stderr).toContain('the host gives no shell: pushing (git push <remote> master) is the only operation the host offers');
    expect(command.stderr).toContain('the host runs no command over SSH');
  });

  it('refuses clone and fetch: pushing is the only operation', async () => {
    const clone = await git(['clone', '-q', remote(ACME_APP), join(root, 'clone')], 'alice', root);
    expect(clone.code).not.toBe(0);
    expect(clone.stderr).toContain(`${HostErrors.SSH_COMMAND_REFUSED.code}: fetching and cloning are not offered: pushing (git push <remote> master) is the only operation`);
    const fetch = await git(['fetch', remote(ACME_APP)]);
    expect(fetch.code).not.toBe(0);
    expect(fetch.stderr).toContain('fetching and cloning are not offered');
  });

  it('forwards no port', async () => {
    let reached = 0;
    const accepted = new Set<Socket>();
    const target = createTcpServer((socket) => {
      reached += 1;
      accepted.add(socket);
      socket.end('secret service\n');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const targetPort = (target.address() as { port: number }).port;
    // The client listens on a unix socket of its own, not a loopback port: a port found free may be taken by
    // another test's server before ssh binds it, and a connection to that server would never close.
    const local = join(await tempDir('runplan-host-tunnel-'), 'tunnel.sock');
    const tunnel: ChildProcess = spawn('ssh', [...sshArgs('alice', 'INFO'), '-N', '-o', 'ExitOnForwardFailure=yes', '-L', `${local}:127.0.0.1:${targetPort}`, `${USER}@127.0.0.1`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let tunnelErrors = '';
    tunnel.stderr?.on('data', (chunk: Buffer) => {
      tunnelErrors += chunk.toString();
    });
    try {
      // Through the client's listener (once it listens): the server refuses the channel, so nothing comes back.
      let answer: string | undefined;
      const deadline = Date.now() + 60_000;
      while (answer === undefined && Date.now() < deadline) {
        answer = await new Promise<string | undefined>((resolve) => {
          const socket = connect({ path: local });
          // Whatever happens, an attempt ends: a channel neither refused nor answered counts as no answer.
          socket.setTimeout(10_000, () => socket.destroy(new Error('no answer in 10 s')));
          let text = '';
          socket.on('data', (chunk) => {
            text += chunk.toString();
          });
          socket.once('error', () => resolve(undefined));
          socket.once('close', (hadError) => resolve(hadError ? undefined : text));
        });
        if (answer === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(answer, tunnelErrors).toBe('');
      expect(reached).toBe(0);
      expect(tunnelErrors).toMatch(/administratively prohibited/);
    } finally {
      // Bounded, so that a client stuck on a loaded machine fails the test with its words instead of a timeout.
      const exited = new Promise((resolve) => (tunnel.exitCode === null && tunnel.signalCode === null ? tunnel.once('exit', resolve) : resolve(undefined)));
      tunnel.kill('SIGTERM');
      const killLater = setTimeout(() => tunnel.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killLater);
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => target.close(resolve));
    }
  });

  it('stops sshd by its PID, and reports a port in use as HOST_PART_FAILED with sshd’s own words', async () => {
    const busy = await freePort();
    const holder = createTcpServer();
    await new Promise<void>((resolve) => holder.listen(busy, '127.0.0.1', resolve));
    const dir = join(root, 'second-sshd');
    const second = new Sshd({ dir, port: busy, listenAddress: '127.0.0.1', user: USER, authorizedKeysFile: paths.authorizedKeys });
    try {
      const error = await second.start().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(HostErrors.HOST_PART_FAILED.is(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(/Address already in use|Cannot bind/);
    } finally {
      await second.stop();
      await new Promise((resolve) => holder.close(resolve));
    }
    expect(existsSync(join(dir, 'sshd.pid'))).toBe(false);
    await rm(dir, { recursive: true });
  });

  it('fails the push with HOST_NOT_SERVING when serve is not running', async () => {
    await new Promise((resolve) => serve?.close(resolve));
    await commit('later.js', 'later\n');
    const pushed = await git(['push', remote(ACME_APP), 'master']);
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain(`${HostErrors.HOST_NOT_SERVING.code}: the host is not serving`);
    const pid = Number((await readFile(sshd.pidFile, 'utf8')).trim());
    await sshd.stop();
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(sshd.pidFile)).toBe(false);
  });
});
