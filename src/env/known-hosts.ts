import { quoteExcerpt } from '../errors/excerpt.js';
import { publicKeyFingerprint } from './ssh-key.js';

/**
 * known_hosts lines (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT"): an optional
 * marker (@cert-authority, @revoked), host patterns (comma-separated, `[host]:port`,
 * or hashed `|1|…`), the key's algorithm, the base64 key, an optional comment.
 * Blank lines and `#` comments are allowed.
 */
export interface KnownHost {
  /** The line as given (trimmed). */
  readonly line: string;
  readonly hosts: string;
  readonly algorithm: string;
  readonly key: string;
  /** "SHA256:…", as ssh-keygen -l and the git hosts show it. */
  readonly fingerprint: string;
}

/** A known_hosts text as entries; a line that is not one is `{ invalid: line number }`. */
export function parseKnownHosts(text: string): { entries: KnownHost[]; invalid: { line: number; text: string }[] } {
  const entries: KnownHost[] = [];
  const invalid: { line: number; text: string }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const entry = parseKnownHost(line);
    if (entry) entries.push(entry);
    else invalid.push({ line: i + 1, text: quoteExcerpt(line, 60) });
  });
  return { entries, invalid };
}

function parseKnownHost(line: string): KnownHost | undefined {
  const fields = line.split(/\s+/);
  if (fields[0]?.startsWith('@')) {
    if (fields[0] !== '@cert-authority' && fields[0] !== '@revoked') return undefined;
    fields.shift();
  }
  const [hosts, algorithm, key] = fields;
  if (!hosts || !algorithm || !key) return undefined;
  if (!/^[a-z0-9][a-z0-9@.-]*$/.test(algorithm) || !/^[A-Za-z0-9+/]+={0,2}$/.test(key) || key.length % 4 !== 0) return undefined;
  if (!wellFormedKey(Buffer.from(key, 'base64'), algorithm)) return undefined;
  return { line, hosts, algorithm, key, fingerprint: publicKeyFingerprint(key) };
}

/**
 * A public key blob is a run of length-prefixed fields, the first naming its own
 * algorithm (RFC 4253, 6.6): a key pasted under the wrong type, or cut short, is caught here.
 */
function wellFormedKey(blob: Buffer, algorithm: string): boolean {
  const fields: Buffer[] = [];
  for (let at = 0; at < blob.length; ) {
    if (at + 4 > blob.length) return false;
    const length = blob.readUInt32BE(at);
    if (at + 4 + length > blob.length) return false;
    fields.push(blob.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return fields.length >= 2 && fields[0]?.toString('latin1') === algorithm;
}
