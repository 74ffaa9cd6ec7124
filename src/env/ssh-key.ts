import { createHash } from 'node:crypto';
import { CoreErrors } from '../errors/core-errors.js';

/**
 * The private SSH key of CC_SSH_PRIVATE_KEY, read without running a program
 * (planning runs none): one key in OpenSSH (`-----BEGIN OPENSSH PRIVATE KEY-----`)
 * or PEM format (RSA, EC, DSA, PKCS#8), not protected by a passphrase — the
 * build has nobody to type one. Every message names the variable and never
 * quotes its value.
 */
export interface PrivateKey {
  readonly format: 'OpenSSH' | 'PEM';
  /** The key's algorithm as OpenSSH names it ("ssh-ed25519"), or as the PEM label says ("RSA"), when the text tells. */
  readonly algorithm: string | undefined;
  /** "SHA256:…" of the public key (what `ssh-keygen -l` and git hosts show), for the OpenSSH format; a PEM key's is logged by the build. */
  readonly fingerprint: string | undefined;
  /** The key as it is written for ssh: LF line ends, the body in lines of 70 (OpenSSH) or 64 (PEM) characters, a final line break. */
  readonly text: string;
  /** How the value was given, when it was not the key file as is (one line with "\n" escapes, spaces for line breaks). */
  readonly repaired: string | undefined;
}

/** No SSH private key comes near this (an RSA 16384 key in OpenSSH format is about 12 KB). */
const MAX_PRIVATE_KEY_BYTES = 64 * 1024;

const LABELS: Readonly<Record<string, { format: PrivateKey['format']; algorithm?: string }>> = {
  'OPENSSH PRIVATE KEY': { format: 'OpenSSH' },
  'RSA PRIVATE KEY': { format: 'PEM', algorithm: 'RSA' },
  'EC PRIVATE KEY': { format: 'PEM', algorithm: 'ECDSA' },
  'DSA PRIVATE KEY': { format: 'PEM', algorithm: 'DSA' },
  'PRIVATE KEY': { format: 'PEM' },
};

const OPENSSH_MAGIC = Buffer.from('openssh-key-v1\0', 'latin1');

export function parsePrivateKey(value: string, variable = 'CC_SSH_PRIVATE_KEY'): PrivateKey {
  const invalid = (what: string, fix?: string) => CoreErrors.SSH_KEY_INVALID.create({ message: `${variable} ${what}; the value is not shown.`, variable, ...(fix ? { fix } : {}) });
  const bytes = Buffer.byteLength(value);
  if (bytes > MAX_PRIVATE_KEY_BYTES) throw invalid(`holds ${bytes} bytes, more than any SSH private key (runplan reads at most ${MAX_PRIVATE_KEY_BYTES})`);
  let text = value.replace(/\r\n?/g, '\n');
  let repaired: string | undefined;
  // A key pasted into a one-line field: its line breaks written as "\n".
  if (!text.trim().includes('\n') && text.includes('\\n')) {
    text = text.replace(/\\r\\n|\\n/g, '\n');
    repaired = 'given on one line with "\\n" for its line breaks';
  }
  const trimmed = text.trim();
  if (/^(ssh-[a-z0-9-]+|ecdsa-sha2-[a-z0-9-]+|sk-[a-z0-9@.-]+) [A-Za-z0-9+/=]+/.test(trimmed) || /-----BEGIN (SSH2 |RSA )?PUBLIC KEY-----/.test(trimmed)) {
    throw invalid(
      'holds a public key, not a private key',
      'Give the private half of the key pair (the file without .pub, starting with -----BEGIN OPENSSH PRIVATE KEY-----); its public half goes to the git server.',
    );
  }
  if (/^PuTTY-User-Key-File-/.test(trimmed)) {
    throw invalid('holds a PuTTY key (.ppk), which OpenSSH cannot read', 'Convert it with `puttygen key.ppk -O private-openssh -o key` (without a passphrase) and give that file.');
  }
  const begins = [...trimmed.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----/g)];
  if (begins.length === 0) throw invalid('is not a private key in OpenSSH or PEM format (it has no -----BEGIN … PRIVATE KEY----- line)');
  if (begins.length > 1) throw invalid(`holds ${begins.length} -----BEGIN blocks; give exactly one private key`);
  const label = (begins[0] as RegExpMatchArray)[1] as string;
  if (label === 'ENCRYPTED PRIVATE KEY') throw passphrase(invalid);
  const kind = LABELS[label];
  if (kind === undefined) throw invalid(`holds a "${label}" block, not an SSH private key`);
  const start = (begins[0] as RegExpMatchArray).index as number;
  const endLine = `-----END ${label}-----`;
  const end = trimmed.indexOf(endLine, start);
  if (end < 0) throw invalid(`has no ${endLine} line (was it cut short?)`);
  if (trimmed.slice(0, start).trim() !== '' || trimmed.slice(end + endLine.length).trim() !== '') throw invalid('holds text before its -----BEGIN line or after its -----END line');
  let body = trimmed.slice(start + `-----BEGIN ${label}-----`.length, end);
  // Legacy PEM headers ("Proc-Type: 4,ENCRYPTED", "DEK-Info: …") precede the base64 data.
  const headers = body.split('\n').filter((l) => l.includes(':'));
  if (headers.some((h) => /^\s*Proc-Type:.*ENCRYPTED/i.test(h))) throw passphrase(invalid);
  if (headers.length > 0) throw invalid('holds PEM header lines that OpenSSH does not expect');
  if (!/\n/.test(body.trim()) && body.trim().includes(' ')) repaired ??= 'given with spaces for its line breaks';
  body = body.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) throw invalid('holds key data that is not base64 (is the key complete?)');
  const data = Buffer.from(body, 'base64');
  let algorithm = kind.algorithm;
  let fingerprint: string | undefined;
  if (kind.format === 'OpenSSH') {
    const key = readOpenSshKey(data);
    if (typeof key === 'string') throw invalid(`holds damaged OpenSSH key data (${key})`);
    if (key.cipher !== 'none') throw passphrase(invalid, key.cipher);
    algorithm = key.algorithm;
    fingerprint = `SHA256:${createHash('sha256').update(key.publicKey).digest('base64').replace(/=+$/, '')}`;
  }
  const width = kind.format === 'OpenSSH' ? 70 : 64;
  const lines = body.match(new RegExp(`.{1,${width}}`, 'g')) ?? [];
  return { format: kind.format, algorithm, fingerprint, text: `-----BEGIN ${label}-----\n${lines.join('\n')}\n${endLine}\n`, repaired };
}

function passphrase(invalid: (what: string, fix?: string) => Error, cipher?: string): Error {
  return invalid(
    `is protected by a passphrase${cipher ? ` (cipher ${cipher})` : ''}, which nobody can type during a build`,
    'Give a key without passphrase: make a deploy key for the build (`ssh-keygen -t ed25519 -N "" -f deploy_key`), or remove the passphrase from a copy (`ssh-keygen -p -N "" -f COPY`).',
  );
}

/**
 * The unencrypted head of an `openssh-key-v1` blob (PROTOCOL.key in OpenSSH's
 * sources): magic, cipher name, KDF name, KDF options, number of keys, then the
 * first public key, whose first field is its algorithm. A string says what is wrong.
 */
function readOpenSshKey(data: Buffer): { cipher: string; algorithm: string; publicKey: Buffer } | string {
  if (data.length < OPENSSH_MAGIC.length || !data.subarray(0, OPENSSH_MAGIC.length).equals(OPENSSH_MAGIC)) return 'not an openssh-key-v1 key';
  let at = OPENSSH_MAGIC.length;
  const field = (): Buffer | undefined => {
    if (at + 4 > data.length) return undefined;
    const length = data.readUInt32BE(at);
    if (at + 4 + length > data.length) return undefined;
    const out = data.subarray(at + 4, at + 4 + length);
    at += 4 + length;
    return out;
  };
  const cipher = field();
  const kdf = field();
  const kdfOptions = field();
  if (!cipher || !kdf || !kdfOptions || at + 4 > data.length) return 'truncated header';
  const count = data.readUInt32BE(at);
  at += 4;
  if (count !== 1) return `${count} keys where OpenSSH reads one`;
  const publicKey = field();
  if (!publicKey || publicKey.length < 4) return 'truncated public key';
  const nameLength = publicKey.readUInt32BE(0);
  if (nameLength === 0 || nameLength > 64 || 4 + nameLength > publicKey.length) return 'unreadable key algorithm';
  const algorithm = publicKey.subarray(4, 4 + nameLength).toString('latin1');
  if (!/^[a-z0-9][a-z0-9@.-]*$/.test(algorithm)) return 'unreadable key algorithm';
  return { cipher: cipher.toString('latin1'), algorithm, publicKey };
}

/** "SHA256:…" of a public key given as its base64 blob (a known_hosts or .pub line's second field), as ssh-keygen -l prints it. */
export function publicKeyFingerprint(base64: string): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(base64, 'base64')).digest('base64').replace(/=+$/, '')}`;
}
