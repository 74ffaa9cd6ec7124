import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Who signed in: the host's token sees every organization; an organization's token only its own. */
export type Member = { readonly kind: 'host' } | { readonly kind: 'org'; readonly org: string };

/** Variable changes staged in the console: nothing reaches the host until Update Changes. */
export interface PendingChanges {
  readonly set: Map<string, string>;
  readonly remove: Set<string>;
}

export interface Session {
  readonly member: Member;
  /** Sent back in every form; a POST without it (or with another) is refused. */
  readonly csrf: string;
  expiresAt: number;
  /** Per application id. */
  readonly pending: Map<string, PendingChanges>;
  /** What the next page says of the last change (kept here, never in the URL: a link cannot put words on a page). */
  flash?: { readonly notice?: string; readonly error?: string };
}

const ORG_TOKEN_PREFIX = 'rpo';

/**
 * An organization's token: `rpo.<org>.<HMAC of the org under the host's token>`.
 * Nothing is stored: the host's token is the only secret, and a new host token
 * withdraws every organization's token at once.
 */
export function orgToken(hostToken: string, org: string): string {
  return `${ORG_TOKEN_PREFIX}.${org}.${createHmac('sha256', hostToken).update(`org:${org}`).digest('base64url')}`;
}

function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Who a token signs in as, or undefined for a token of nobody. */
export function memberOfToken(hostToken: string, token: string): Member | undefined {
  if (sameText(token, hostToken)) return { kind: 'host' };
  const [prefix, org, mac, ...rest] = token.split('.');
  if (prefix !== ORG_TOKEN_PREFIX || org === undefined || mac === undefined || rest.length > 0 || org === '') return undefined;
  return sameText(token, orgToken(hostToken, org)) ? { kind: 'org', org } : undefined;
}

/** How long a session lasts without being used. */
const SESSION_IDLE_MS = 8 * 60 * 60 * 1000;

/**
 * The console's sessions, in memory: a serve that restarts signs everyone out
 * (and drops staged changes, which never reached the host). The cookie holds a
 * random id; the map is keyed by its hash, so a dump of memory holds no cookie.
 */
export class Sessions {
  private readonly byHash = new Map<string, Session>();

  constructor(private readonly now: () => number = Date.now) {}

  private static hash(id: string): string {
    return createHash('sha256').update(id).digest('hex');
  }

  open(member: Member): { id: string; session: Session } {
    const id = randomBytes(32).toString('base64url');
    const session: Session = { member, csrf: randomBytes(24).toString('base64url'), expiresAt: this.now() + SESSION_IDLE_MS, pending: new Map() };
    this.byHash.set(Sessions.hash(id), session);
    return { id, session };
  }

  find(id: string | undefined): Session | undefined {
    if (id === undefined) return undefined;
    const key = Sessions.hash(id);
    const session = this.byHash.get(key);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.now()) {
      this.byHash.delete(key);
      return undefined;
    }
    session.expiresAt = this.now() + SESSION_IDLE_MS;
    return session;
  }

  close(id: string | undefined): void {
    if (id !== undefined) this.byHash.delete(Sessions.hash(id));
  }
}

/** Whether the form's token is the session's. */
export function csrfMatches(session: Session, given: string | undefined): boolean {
  return given !== undefined && sameText(given, session.csrf);
}
