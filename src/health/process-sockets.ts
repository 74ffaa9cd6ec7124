import { readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** A TCP socket a process of the application listens on. */
export interface ListeningSocket {
  /** As a person writes it: 0.0.0.0, 127.0.0.1, ::, ::1, 10.0.0.5… */
  readonly address: string;
  readonly port: number;
  readonly pid: number;
  /** The process's program (argv[0] without its directory), e.g. node. */
  readonly command: string;
}

/** One line of /proc/<pid>/stat, the fields needed to find a process tree. */
interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  readonly session: number;
}

/**
 * The TCP sockets in LISTEN state that the processes started from `roots`
 * hold (Linux's /proc): each root, its descendants (by parent pid), and every
 * process of a session a root leads (runplan starts each process in a session
 * of its own, so a daemon that left its parent is still found). A root may be a
 * wrapper (a sandbox) whose descendants hold the sockets. Each process's
 * sockets (/proc/<pid>/fd, `socket:[inode]`) are looked up in the TCP tables of
 * its own network namespace (/proc/<pid>/net/tcp{,6}).
 *
 * undefined when /proc cannot be read (not Linux): nothing can be said.
 */
export async function listeningSockets(roots: readonly number[], proc = '/proc'): Promise<ListeningSocket[] | undefined> {
  let entries: string[];
  try {
    entries = (await readdir(proc)).filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const stats = (await Promise.all(entries.map((name) => readStat(proc, Number(name))))).filter((s): s is ProcStat => s !== undefined);
  const tree = processTree(roots, stats);
  const found: ListeningSocket[] = [];
  const tables = new Map<string, Promise<Map<string, { address: string; port: number }>>>();
  for (const pid of [...tree].sort((a, b) => a - b)) {
    const inodes = await socketInodes(proc, pid);
    if (inodes.length === 0) continue;
    const namespace = await readlink(join(proc, String(pid), 'ns', 'net')).catch(() => `pid ${pid}`);
    if (!tables.has(namespace)) tables.set(namespace, listenTable(proc, pid));
    const table = (await tables.get(namespace)) ?? new Map();
    const command = await commandName(proc, pid);
    for (const inode of inodes) {
      const socket = table.get(inode);
      if (socket) found.push({ ...socket, pid, command });
    }
  }
  return found;
}

/** The roots, their descendants, and the members of the sessions they lead. */
export function processTree(roots: readonly number[], stats: readonly ProcStat[]): Set<number> {
  const tree = new Set(roots.filter((pid) => stats.some((s) => s.pid === pid)));
  const leaders = new Set(tree);
  for (const s of stats) if (leaders.has(s.session)) tree.add(s.pid);
  // Descendants: until a pass adds none (a child may be listed before its parent).
  for (let grew = true; grew; ) {
    grew = false;
    for (const s of stats) {
      if (!tree.has(s.pid) && tree.has(s.ppid)) {
        tree.add(s.pid);
        grew = true;
      }
    }
  }
  return tree;
}

async function readStat(proc: string, pid: number): Promise<ProcStat | undefined> {
  const text = await readFile(join(proc, String(pid), 'stat'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  // The name (field 2) is in parentheses and may hold anything: the fields after its last ")" are plain.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pid, ppid: Number(fields[1]), session: Number(fields[3]) };
}

/** The program's name: its argv[0] without the directory (node's main thread calls itself MainThread in comm). */
async function commandName(proc: string, pid: number): Promise<string> {
  const argv0 = (await readFile(join(proc, String(pid), 'cmdline'), 'utf8').catch(() => '')).split('\0')[0] ?? '';
  const name = argv0.split('/').pop() ?? '';
  return name !== '' ? name : (await readFile(join(proc, String(pid), 'comm'), 'utf8').catch(() => '')).trim();
}

/** The inodes of the sockets a process has open (a process of another user may be unreadable: none). */
async function socketInodes(proc: string, pid: number): Promise<string[]> {
  const dir = join(proc, String(pid), 'fd');
  const fds = await readdir(dir).catch(() => [] as string[]);
  const links = await Promise.all(fds.map((fd) => readlink(join(dir, fd)).catch(() => '')));
  return links.map((l) => /^socket:\[(\d+)\]$/.exec(l)?.[1]).filter((i): i is string => i !== undefined);
}

/** inode → address and port of every listening TCP socket of the process's network namespace. */
async function listenTable(proc: string, pid: number): Promise<Map<string, { address: string; port: number }>> {
  const table = new Map<string, { address: string; port: number }>();
  for (const file of ['tcp', 'tcp6']) {
    const text = await readFile(join(proc, String(pid), 'net', file), 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      if (!local || state !== '0A' || !inode) continue; // 0A: LISTEN
      const [hex, portHex] = local.split(':');
      if (hex === undefined || portHex === undefined) continue;
      table.set(inode, { address: procAddress(hex), port: Number.parseInt(portHex, 16) });
    }
  }
  return table;
}

/** An address of /proc/net/tcp{,6}: 32-bit words in the host's (little-endian) byte order. */
export function procAddress(hex: string): string {
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8) {
    const part = hex.slice(word, word + 8);
    for (let i = 6; i >= 0; i -= 2) bytes.push(Number.parseInt(part.slice(i, i + 2), 16));
  }
  if (bytes.length === 4) return bytes.join('.');
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return `::ffff:${bytes.slice(12).join('.')}`;
  const groups = Array.from({ length: 8 }, (_, i) => (((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0)).toString(16));
  // The longest run of zero groups (two or more) becomes "::".
  let best = { at: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.length && j - i >= 2) best = { at: i, length: j - i };
    i = j;
  }
  if (best.at < 0) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.length).join(':')}`;
}

/** "0.0.0.0:3000 (node, pid 12)", one per socket, the same socket once. */
function describeSockets(sockets: readonly ListeningSocket[]): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const s of sockets) {
    const where = s.address.includes(':') ? `[${s.address}]:${s.port}` : `${s.address}:${s.port}`;
    const text = `${where} (${s.command || 'process'}, pid ${s.pid})`;
    if (!seen.has(where)) out.push(text);
    seen.add(where);
  }
  return out.join(', ');
}

/** What a "not listening" failure says of where the application does listen, and the fix that names PORT. */
export interface WhereItListens {
  /** Appended to the failure's message: "; the application's processes listen on …". */
  readonly message: string;
  readonly fix: string;
  /** The port is the right one, bound to loopback addresses only (read in the application's own network, where nothing else tells it). */
  readonly loopbackOnly?: boolean;
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/**
 * The facts a "not listening" failure lacks: the ports the application's
 * processes listen on instead (`sockets`), or that they listen on none, and how
 * the application reads the port it must listen on (`language`: the plan's app type).
 */
export function whereItListens(sockets: readonly ListeningSocket[], pids: readonly number[], port: number, language: string): WhereItListens {
  const read =
    language === 'node'
      ? `read it from process.env.PORT (e.g. app.listen(process.env.PORT ?? 3000, "0.0.0.0"), or the framework's own port option set from it)`
      : language === 'ruby'
        ? 'read it from ENV["PORT"]'
        : 'read it from the PORT environment variable';
  if (sockets.length === 0) {
    return {
      message: `; the application's processes (pid ${pids.join(', ')}) listen on no TCP port`,
      fix: `Start a web server that listens on 0.0.0.0 at the port in PORT (${port} here): ${read}. A process that serves no HTTP belongs in a worker (CC_WORKER_COMMAND).`,
    };
  }
  const onPort = sockets.filter((s) => s.port === port);
  if (onPort.length > 0 && onPort.every((s) => LOOPBACK.test(s.address))) {
    return {
      message: `; the application's processes listen on ${describeSockets(onPort)}, the loopback interface only`,
      fix: `Listen on 0.0.0.0 (all interfaces) at the port in PORT (${port} here); the service reaches the application from outside its instance.`,
      loopbackOnly: true,
    };
  }
  return {
    message: `; the application's processes listen on ${describeSockets(sockets)} instead`,
    fix: `Listen on 0.0.0.0 at the port in PORT (${port} here), not a fixed one: ${read}.`,
  };
}
