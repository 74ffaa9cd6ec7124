import { describe, expect, it } from 'vitest';
import { html } from '../src/console/html.js';
import { csrfMatches, memberOfToken, orgToken, Sessions } from '../src/console/sessions.js';

describe('console sign-in tokens', () => {
  const hostToken = 'host-token-of-this-data-folder';

  it("signs in the host's token as the host, and an organization's token as that organization only", () => {
    expect(memberOfToken(hostToken, hostToken)).toEqual({ kind: 'host' });
    expect(memberOfToken(hostToken, orgToken(hostToken, 'acme'))).toEqual({ kind: 'org', org: 'acme' });
    // Another organization's name over acme's MAC, or a token of another host: nobody.
    const [, , mac] = orgToken(hostToken, 'acme').split('.');
    expect(memberOfToken(hostToken, `rpo.other.${mac}`)).toBeUndefined();
    expect(memberOfToken(hostToken, orgToken('another-host', 'acme'))).toBeUndefined();
    expect(memberOfToken(hostToken, '')).toBeUndefined();
    expect(memberOfToken(hostToken, 'rpo..x')).toBeUndefined();
  });
});

describe('console sessions', () => {
  it('ends a session after 8 hours unused, and each use extends it', () => {
    let now = 0;
    const sessions = new Sessions(() => now);
    const { id, session } = sessions.open({ kind: 'org', org: 'acme' });
    now = 7 * 3600_000;
    expect(sessions.find(id)).toBe(session);
    now += 7 * 3600_000;
    expect(sessions.find(id)).toBe(session);
    now += 8 * 3600_000;
    expect(sessions.find(id)).toBeUndefined();
  });

  it('knows a session by its cookie only, until it is closed', () => {
    const sessions = new Sessions();
    const { id, session } = sessions.open({ kind: 'host' });
    expect(sessions.find(`${id}x`)).toBeUndefined();
    expect(sessions.find(undefined)).toBeUndefined();
    expect(csrfMatches(session, session.csrf)).toBe(true);
    expect(csrfMatches(session, `${session.csrf}x`)).toBe(false);
    expect(csrfMatches(session, undefined)).toBe(false);
    sessions.close(id);
    expect(sessions.find(id)).toBeUndefined();
  });
});

describe('console HTML', () => {
  it('escapes every value unless it is HTML made by the template itself', () => {
    const name = `<script>alert("x")</script>&'`;
    expect(html`<td>${name}</td>`.text).toBe('<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</td>');
    expect(html`<ul>${[1, 2].map((n) => html`<li>${n}</li>`)}</ul>`.text).toBe('<ul><li>1</li><li>2</li></ul>');
    expect(html`${null}${undefined}${false}`.text).toBe('');
  });
});
