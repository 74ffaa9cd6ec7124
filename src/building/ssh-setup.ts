import { shellWord } from '../shell/shell-word.js';
import { chmod, mkdir, mkdtemp, open, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Environment } from '../env/assemble.js';
import { parseKnownHosts } from '../env/known-hosts.js';
import { parsePrivateKey, publicKeyFingerprint } from '../env/ssh-key.js';
import { CoreErrors } from '../errors/core-errors.js';
import { CoreWarnings } from '../errors/core-warnings.js';
import { writeFileAtomic } from '../files/atomic-write.js';
import type { AppUser } from '../process/app-user.js';
import { runProgram } from '../process/run-program.js';
import type { HostSettings } from '../host/host-settings.js';
import type { Logger } from '../log/logger.js';
import type { SshKeyPlan } from '../plan/schema.js';
import { ownPath } from '../process/ownership.js';
import { removeUserDirectory, UserFiles } from '../process/user-files.js';

const KEY_FILE = 'id';
const KNOWN_HOSTS_FILE = 'known_hosts';
const KEYGEN_TIMEOUT_MS = 20_000;
// ssh appends a line per new host; more than this is not a known_hosts file ssh wrote.
const KNOWN_HOSTS_MAX_BYTES = 1024 * 1024;

/** The build's SSH key, in place for its steps. */
export interface SshSetup {
  /** For every build step (never a process of the run phase): GIT_SSH_COMMAND. */
  readonly env: Readonly<Record<string, string>>;
  /** After each step: logs and remembers the host keys it trusted on first use. */
  afterStep(): Promise<void>;
  /** Removes the directory with the key; called whatever happened. */
  remove(): Promise<void>;
}

export interface SshSetupOptions {
  readonly env: Environment;
  readonly host: HostSettings;
  readonly user: AppUser;
  readonly logger: Logger;
  /** Made (replaced if present) and removed here; outside the application. */
  readonly dir?: string | undefined;
  /** Host keys an earlier build of the application trusted on first use. */
  readonly trustedHostsFile?: string | undefined;
}

/**
 * Writes the plan's SSH key and known hosts into a private directory (0700, the
 * steps' user's) outside the application — the key 0600, exactly as ssh reads
 * it — checks it with ssh-keygen, and gives the steps GIT_SSH_COMMAND: only that
 * key (IdentitiesOnly, no agent), only those known hosts (the global file is not
 * read), no prompt (BatchMode). The caller removes the directory when the build
 * ends; a build killed before leaves it to the next one (removeAbandonedBuildTemp).
 */
export async function prepareSsh(plan: SshKeyPlan, options: SshSetupOptions): Promise<SshSetup> {
  const { env, host, user, logger } = options;
  const value = env.withheld(plan.variable)?.value;
  if (value === undefined || value.trim() === '') {
    throw CoreErrors.PLAN_SECRET_MISSING.create({ message: `the plan needs the value of ${plan.variable} (the SSH key of its build), which plans never hold.`, variable: plan.variable });
  }
  const key = parsePrivateKey(value, plan.variable);
  const { fromFile, fromVariable } = await knownHostsText(plan, env, host);
  const given = [...fromFile, ...fromVariable];
  const remembered = plan.hostKeyChecking === 'trust-on-first-use' && options.trustedHostsFile ? await rememberedHosts(options.trustedHostsFile) : [];
  const initial = [...given, ...remembered];

  // Once handed over, the directory is the user's: it is read and removed as the user (docs/security.md, "Privilege model").
  const files = new UserFiles(user);
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'runplan-ssh-')));
  const remove = () => removeUserDirectory(dir, files);
  try {
    if (options.dir !== undefined) {
      await remove();
      await mkdir(dir, { recursive: true, mode: 0o700 });
    }
    await chmod(dir, 0o700);
    const keyFile = join(dir, KEY_FILE);
    const hostsFile = join(dir, KNOWN_HOSTS_FILE);
    // Written while the directory is still root's, and only then given to the user.
    await writePrivate(keyFile, key.text, user);
    await writePrivate(hostsFile, initial.map((l) => `${l}\n`).join(''), user);
    await ownPath(dir, user);
    const publicKey = await checkKey(keyFile, plan.variable);
    const checking = plan.hostKeyChecking === 'strict' ? 'yes' : 'accept-new';
    const sources = [
      ...(plan.knownHosts.variable ? [`${fromVariable.length} from ${plan.knownHosts.variable}`] : []),
      ...(plan.knownHosts.hostFile ? [`${fromFile.length} from the host's file ${host.sshKnownHostsFile}`] : []),
      ...(remembered.length > 0 ? [`${remembered.length} trusted on first use by earlier builds, in ${options.trustedHostsFile}`] : []),
    ];
    logger.info(
      `SSH key of ${plan.variable} for git in the build steps: ${publicKey.algorithm} ${publicKey.fingerprint}; known host keys: ${sources.length > 0 ? sources.join(', ') : 'none yet'}; ${checking === 'yes' ? 'checked strictly' : 'new host keys trusted on first use'}`,
    );
    const command = [
      'ssh',
      `-i ${shellWord(keyFile)}`,
      '-o IdentitiesOnly=yes',
      '-o IdentityAgent=none',
      `-o UserKnownHostsFile=${shellWord(hostsFile)}`,
      '-o GlobalKnownHostsFile=/dev/null',
      `-o StrictHostKeyChecking=${checking}`,
      '-o HashKnownHosts=no',
      '-o BatchMode=yes',
      '-o ConnectTimeout=30',
    ].join(' ');
    const reported = new Set(initial);
    return {
      env: { GIT_SSH_COMMAND: command },
      async afterStep() {
        if (checking !== 'accept-new') return;
        const added = ((await files.read(hostsFile, KNOWN_HOSTS_MAX_BYTES).catch(() => undefined)) ?? '')
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l !== '' && !reported.has(l));
        if (added.length === 0) return;
        for (const line of added) {
          reported.add(line);
          const entry = parseKnownHosts(line).entries[0];
          logger.warn(
            `${CoreWarnings.SSH_TRUST_ON_FIRST_USE.code}: trusted the SSH host key of ${entry?.hosts ?? 'a server'} on first use: ${entry ? `${entry.algorithm} ${entry.fingerprint}` : 'unreadable entry'}. Compare it with the fingerprint the server's operator publishes; the later builds of this application require this key. To check it from the first build, give it in ${plan.knownHosts.variable ?? 'CC_SSH_KNOWN_HOSTS'}: ${line}`,
          );
        }
        if (options.trustedHostsFile) {
          const kept = [...remembered, ...[...reported].filter((l) => !given.includes(l) && !remembered.includes(l))];
          await writeFileAtomic(options.trustedHostsFile, kept.map((l) => `${l}\n`).join(''), 0o644).catch((error: Error) =>
            logger.warn(`could not remember the SSH host keys trusted on first use in ${options.trustedHostsFile}: ${error.message}`),
          );
        }
      },
      remove,
    };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** known_hosts lines from the plan's sources: the deployment's variable, the host's file. */
async function knownHostsText(plan: SshKeyPlan, env: Environment, host: HostSettings): Promise<{ fromFile: string[]; fromVariable: string[] }> {
  const fromFile: string[] = [];
  if (plan.knownHosts.hostFile) {
    const file = host.sshKnownHostsFile;
    if (file === undefined) {
      throw CoreErrors.HOST_INVALID_SETTING.create({
        message: "the plan checks SSH host keys against the host's known hosts file, and this host gives none (--ssh-known-hosts FILE, RUNPLAN_SSH_KNOWN_HOSTS).",
        fix: 'Give the known hosts file the plan was made with (--ssh-known-hosts FILE or RUNPLAN_SSH_KNOWN_HOSTS), or plan again on this host.',
      });
    }
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw CoreErrors.HOST_INVALID_SETTING.create({
        message: `cannot read the SSH known hosts file ${file}: ${error.code ?? error.message}.`,
        file,
        fix: 'Give a readable known_hosts file (--ssh-known-hosts FILE, RUNPLAN_SSH_KNOWN_HOSTS).',
      });
    });
    const { entries, invalid } = parseKnownHosts(text);
    if (invalid[0] !== undefined) {
      throw CoreErrors.HOST_INVALID_SETTING.create({
        // Not quoted: whatever file the setting names, its content is not for the deployment log.
        message: `line ${invalid[0].line} of the SSH known hosts file ${file} is not a known_hosts entry (host names, key type, base64 key of that type).`,
        file,
        fix: 'Give one known_hosts line per server (host names, key type, base64 key), as `ssh-keyscan -p PORT HOST` prints it.',
      });
    }
    fromFile.push(...entries.map((e) => e.line));
  }
  // Checked when the plan was made (RUNPLAN_E_SSH_KNOWN_HOSTS_INVALID); a saved plan carries the same value.
  const fromVariable = plan.knownHosts.variable ? parseKnownHosts(env.get(plan.knownHosts.variable) ?? '').entries.map((e) => e.line) : [];
  return { fromFile, fromVariable };
}

async function rememberedHosts(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return parseKnownHosts(text).entries.map((e) => e.line);
}

/** Created with its final mode and owner before anything is written into it. */
async function writePrivate(path: string, content: string, user: AppUser): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.chmod(0o600);
    if (user.dropped) await handle.chown(user.uid, user.gid);
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

/** ssh-keygen reads the key as ssh will (an empty passphrase: it never prompts); its public half gives the fingerprint. */
async function checkKey(keyFile: string, variable: string): Promise<{ algorithm: string; fingerprint: string }> {
  const ran = await runProgram('ssh-keygen', ['-y', '-P', '', '-f', keyFile], { timeoutMs: KEYGEN_TIMEOUT_MS, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
  if (ran === undefined) {
    throw CoreErrors.SSH_CLIENT_MISSING.create({ message: `the build needs the OpenSSH client for ${variable} (ssh, ssh-keygen), and ssh-keygen is not on PATH.` });
  }
  // A key ssh-keygen hangs on is not a key this build can use, but the host is at fault: its own code says so.
  if (ran.timeout) throw ran.timeout;
  const [algorithm, blob] = ran.stdout.trim().split(/\s+/);
  if (!ran.ok || !algorithm || !blob) {
    const said = (ran.stderr || `exit status ${ran.exitCode}`).replaceAll(keyFile, 'the key').trim().split('\n')[0]?.slice(0, 200);
    throw CoreErrors.SSH_KEY_INVALID.create({ message: `ssh-keygen cannot read the key of ${variable}${said ? ` (${said})` : ''}; the value is not shown.`, variable });
  }
  return { algorithm, fingerprint: publicKeyFingerprint(blob) };
}
