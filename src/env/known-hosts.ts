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
  // The blob names its own algorithm first: a key pasted under the wrong type, or cut short, is caught here.
  const blob = Buffer.from(key, 'base64');
  if (blob.length < 4) return undefined;
  const nameLength = blob.readUInt32BE(0);
  if (4 + nameLength > blob.length || blob.subarray(4, 4 + nameLength).toString('latin1') !== algorithm) return undefined;
  return { line, hosts, algorithm, key, fingerprint: publicKeyFingerprint(key) };
}
