import { createHash } from 'node:crypto';
import { chown, open, rename, rm } from 'node:fs/promises';
import { HostErrors } from '../errors.js';
import type { SshKeyRecord } from '../store/store.js';
import { isKeyId } from '../git/app-id.js';

/** The key types the host accepts: those OpenSSH 9.2 accepts by default for user keys. */
const KEY_TYPES = new Set(['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa']);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export interface ParsedPublicKey {
  /** `<type> <base64>`, as authorized_keys holds it. */
  readonly publicKey: string;
  readonly comment: string;
  /** OpenSSH's `SHA256:` fingerprint, as ssh-keygen -l prints it. */
  readonly fingerprint: string;
}

/**
 * One OpenSSH public key line (`ssh-ed25519 AAAA… comment`), checked: a known
 * type, a base64 body that is exactly the key blob of that type. Anything else
 * is refused: options before the type (they would widen what the key may do),
 * several lines, a private key. Never quotes the text back (a private key
 * given by mistake must not reach a log).
 */
export function parsePublicKey(text: string, file = 'the key file'): ParsedPublicKey {
  const refuse = (message: string) => HostErrors.INPUT_KEY.create({ message: `${file}: ${message}`, file });
  if (/PRIVATE KEY/.test(text)) throw refuse('this is a private key; give the public one (the .pub file beside it), and keep the private key to yourself');
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length === 0) throw refuse('the file is empty');
  if (lines.length > 1) throw refuse(`the file holds ${lines.length} lines; give one public key per file`);
  const line = (lines[0] as string).trim();
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(line)) throw refuse('the line holds control characters');
  const [type = '', body = '', ...rest] = line.split(/[ \t]+/);
  if (!KEY_TYPES.has(type)) {
    const shown = /^[a-z0-9@.-]{1,40}$/.test(type) ? ` (${type})` : '';
    throw refuse(`the line does not start with a key type the host accepts${shown}: ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa; options before the type are not accepted`);
  }
  if (!BASE64.test(body)) throw refuse(`the ${type} key's body is not base64`);
  const blob = Buffer.from(body, 'base64');
  if (blob.toString('base64') !== body) throw refuse(`the ${type} key's body is not canonical base64`);
  const problem = blobProblem(type, blob);
  if (problem !== undefined) throw refuse(`the ${type} key's body is not a valid ${type} key: ${problem}`);
  return { publicKey: `${type} ${body}`, comment: rest.join(' '), fingerprint: fingerprintOf(blob) };
}

/** OpenSSH's fingerprint of a key blob: SHA256, base64 without padding. */
function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** Why a decoded blob is not a key of `type` (RFC 4253 strings), or undefined. */
function blobProblem(type: string, blob: Buffer): string | undefined {
  const fields: Buffer[] = [];
  let at = 0;
  while (at < blob.length) {
    if (at + 4 > blob.length) return 'truncated';
    const length = blob.readUInt32BE(at);
    if (at + 4 + length > blob.length) return 'truncated';
    fields.push(blob.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  if (fields[0]?.toString('latin1') !== type) return 'its embedded type differs';
  if (type === 'ssh-ed25519') return fields.length === 2 && fields[1]?.length === 32 ? undefined : 'expected one 32-byte key';
  if (type.startsWith('ecdsa-sha2-')) {
    if (fields.length !== 3) return 'expected a curve and a point';
    return fields[1]?.toString('latin1') === type.slice('ecdsa-sha2-'.length) ? undefined : 'its curve differs from its type';
  }
  // ssh-rsa: e and n; sshd 9.2 refuses moduli under 1024 bits (RequiredRSASize).
  if (fields.length !== 3) return 'expected an exponent and a modulus';
  const modulus = fields[2] as Buffer;
  const bits = (modulus.length - (modulus[0] === 0 ? 1 : 0)) * 8;
  return bits >= 1024 ? undefined : `its modulus has ${bits} bits; use at least 2048 (or an ed25519 key)`;
}

/**
 * The authorized_keys text: one line per key, `command="…",restrict <type>
 * <base64> <key id>`. restrict turns off every forwarding, the pty and ~/.ssh/rc;
 * command= makes sshd run only the host's forced command whatever the client
 * asks (what it asked is in SSH_ORIGINAL_COMMAND). The comment is the key id:
 * never text from the user.
 */
export function authorizedKeysText(keys: readonly SshKeyRecord[], command: (keyId: string) => string): string {
  const lines = ['# Written by runplan-host from its store; edits are overwritten.'];
  for (const key of keys) {
    if (!isKeyId(key.id)) throw new Error(`authorized_keys: invalid key id ${JSON.stringify(key.id)}`);
    const parsed = parsePublicKey(key.publicKey, `the stored key ${key.id}`);
    lines.push(`command="${quoteOption(command(key.id))}",restrict ${parsed.publicKey} ${key.id}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A value for `command="…"`: sshd's parser turns `\"` into `"` and keeps every
 * other character as is, so only `"` needs escaping; a line break would end the
 * entry and a trailing backslash would escape the closing quote: both refused.
 */
function quoteOption(command: string): string {
  if (/[\u0000-\u001f\u007f]/.test(command) || command.endsWith('\\')) throw new Error('authorized_keys: the forced command holds a control character or ends with a backslash');
  return command.replaceAll('"', '\\"');
}

/**
 * Replaces `file` at once (temporary file + rename in the same folder), so sshd
 * never reads half a file. Mode 0644 and owned by root: sshd's StrictModes
 * accepts a key file owned by root or the user and writable by its owner only.
 */
export async function writeAuthorizedKeys(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w', 0o644);
  try {
    await handle.writeFile(text);
    await handle.chmod(0o644);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await chown(temporary, 0, 0);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
