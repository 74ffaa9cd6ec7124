/**
 * Which variables are secrets, and a redactor that removes their values from any
 * text before it is printed, logged, serialised or put into an error.
 */

/** Names the specification marks as credentials. */
const KNOWN_SECRET_NAMES = new Set([
  'NPM_TOKEN',
  'SECRET_KEY_BASE',
  'STORAGE_ADDON_KEY_ID',
  'STORAGE_ADDON_KEY_SECRET',
  // The rest of the object-storage add-on's access: the specification has them pass through unprinted.
  'STORAGE_ADDON_BUCKET_NAME',
  'STORAGE_ADDON_ENDPOINT',
  'CC_HTTP_BASIC_AUTH',
  // The private key that fetches private git dependencies during the build (docs/service.md, "Private SSH key").
  'CC_SSH_PRIVATE_KEY',
]);

// Conventional credential names (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, DB_PASSWORD, …).
const SECRET_NAME_PATTERN = /(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|_PASS$|_PWD$|PRIVATE|CREDENTIAL|API_?KEY|ACCESS_?KEY|AUTH)/i;

const NO_NAMES: ReadonlySet<string> = new Set();

/** Why a variable is secret: a name the specification or a buildpack declares, a credential-like name, or a URL with a password. */
export type SecretReason = 'known' | 'name' | 'url-credentials';

/**
 * Why a variable is secret, or undefined when it is not. `declared`: the names
 * buildpacks declare secret (Buildpack.secretVariables) besides runplan's own.
 */
export function secretReason(name: string, value: string, declared: ReadonlySet<string> = NO_NAMES): SecretReason | undefined {
  if (KNOWN_SECRET_NAMES.has(name) || declared.has(name) || /^CC_HTTP_BASIC_AUTH_\d+$/.test(name)) return 'known';
  if (SECRET_NAME_PATTERN.test(name)) return 'name';
  if (urlPassword(value) !== undefined) return 'url-credentials';
  return undefined;
}

/** The password of a `scheme://user:password@host` value, if it has one. */
function urlPassword(value: string): string | undefined {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:([^@\s/]+)@/i.exec(value);
  return m?.[1];
}

// Shorter values would turn ordinary words into "***" all over the output.
const MIN_REDACTED_LENGTH = 3;
const REDACTED = '***';

// A line of a multi-line secret (an SSH key) is printed on its own by line-based output.
const MIN_REDACTED_LINE_LENGTH = 8;
const ARMOUR = /^-----(BEGIN|END) [A-Z0-9 ]+-----$/;

/**
 * Replaces every known secret value (and its URL-encoded, base64 and escaped forms,
 * and each line of a multi-line one) by `***`. Plain substring scanning, longest
 * first: one regular expression of all the values fails for a value of some 25 KB
 * ("regular expression too large"), and its error would quote the secret.
 */
const PARTIAL_TOKEN = /(_auth(?:Token)?=|Bearer |Basic )[^\s[\]]{1,16}\[hidden\]/g;

export class Redactor {
  private readonly needles = new Set<string>();
  private sorted: string[] | undefined;

  /** `declared`: variable names the buildpacks declare secret, besides runplan's own. */
  constructor(readonly declared: ReadonlySet<string> = NO_NAMES) {}

  /** Registers the secret parts of a variable; returns whether it is secret. */
  addVariable(name: string, value: string): boolean {
    const reason = secretReason(name, value, this.declared);
    if (reason === undefined) return false;
    this.addSecret(value);
    // The password of a URL is sent, and quoted, on its own too: whatever made the variable secret (a declared name, a credential-like one).
    const pw = urlPassword(value);
    if (pw !== undefined) this.addSecret(pw);
    // A "login:password" value is also sent as the password alone and as base64.
    if (/BASIC_AUTH/.test(name)) {
      const colon = value.indexOf(':');
      if (colon >= 0) this.addSecret(value.slice(colon + 1));
    }
    return true;
  }

  addSecret(value: string): void {
    if (value.length < MIN_REDACTED_LENGTH) return;
    // Escaped as JSON and as Node's messages quote values (a NUL as \x00 or \u0000).
    const escaped = JSON.stringify(value).slice(1, -1);
    const forms = [value, encodeURIComponent(value), Buffer.from(value).toString('base64'), escaped, escaped.replace(/\\u00([0-9a-f]{2})/g, '\\x$1')];
    // Not the armour lines (-----BEGIN OPENSSH PRIVATE KEY-----): every key has them, and a message naming the format would lose its words.
    for (const line of value.split(/\r?\n/)) if (line.trim().length >= MIN_REDACTED_LINE_LENGTH && !ARMOUR.test(line.trim())) forms.push(line.trim());
    for (const form of forms) if (form.length >= MIN_REDACTED_LENGTH) this.needles.add(form);
    this.sorted = undefined;
  }

  get size(): number {
    return this.needles.size;
  }

  redact(text: string): string {
    if (this.needles.size === 0) return text;
    // Longest first, so a secret containing another is removed whole.
    this.sorted ??= [...this.needles].sort((a, b) => b.length - a.length);
    let out = text;
    for (const needle of this.sorted) if (out.includes(needle)) out = out.split(needle).join(REDACTED);
    // pnpm shows the first characters of a token it sent ("Bearer abcd[hidden]", "_authToken=abcd[hidden]"): a part of a secret is not shown either.
    return out.includes('[hidden]') ? out.replace(PARTIAL_TOKEN, `$1${REDACTED}`) : out;
  }

  /** Redacts every string inside a JSON-like value. */
  redactDeep<T>(value: T): T {
    if (this.needles.size === 0) return value;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redact(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object') {
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [this.redact(k), walk(x)]));
      }
      return v;
    };
    return walk(value) as T;
  }
}
