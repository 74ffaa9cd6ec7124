import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostErrors } from '../src/errors.js';
import { checkDomainName } from '../src/validate.js';
import { appHostOf, TestHost } from './helpers/test-host.js';

const DOMAIN = 'shop.example.test';
const UNKNOWN_HOST = 'No application at this address.\n';

interface DomainView {
  name: string;
  appId: string;
  app: string;
  org: string;
  url: string;
}

describe('custom domain names (validation)', () => {
  it('keeps a lower-case RFC 1123 host name, and refuses wildcards, bad syntax and the names of the host’s own domain', () => {
    expect(checkDomainName(' Shop.Example.COM. ', 'apps.example.com')).toBe('shop.example.com');
    expect(checkDomainName('a-b.c1.example', 'localhost')).toBe('a-b.c1.example');
    expect(checkDomainName('shop.apps.example.com', 'apps.example.com')).toBe('shop.apps.example.com');
    for (const bad of [
      '*.example.com',
      'shop',
      'shop_1.example.com',
      '-shop.example.com',
      'shop-.example.com',
      'shop..example.com',
      'shop.example.com/x',
      'shop.example.com:443',
      `${'a'.repeat(64)}.example.com`,
      `${'abcdefghi.'.repeat(26)}com`,
      '',
      'apps.example.com',
      'console.apps.example.com',
      'app-0b7c9d2e-1f3a-4b5c-8d6e-7f8091a2b3c4.apps.example.com',
      'app_0b7c9d2e-1f3a-4b5c-8d6e-7f8091a2b3c4.apps.example.com',
    ]) {
      expect(() => checkDomainName(bad, 'apps.example.com'), bad).toThrow(HostErrors.DOMAIN_INVALID.code);
    }
  });
});

/**
 * Applications' host names through a real host: the default `app-<uuid>` name, the old `app_<uuid>` one
 * redirected, and custom domains added and removed with the CLI, the API and the console, each served by
 * the edge (Caddy) at once, over HTTPS with the edge's own CA, to the fixture that reports what it got.
 */
describe('runplan-host application names and custom domains', () => {
  let host: TestHost;
  let app: { id: string; url: string; gitRemote: string };
  let other: { id: string };

  const facts = async (name: string) => {
    const answer = await host.get(name, '/');
    expect(answer.status, answer.body).toBe(200);
    return answer.json<{ forwardedHost: string; forwardedProto: string; appId: string; release: string | null; pid: number }>();
  };

  beforeAll(async () => {
    host = await TestHost.create();
    // As an operator's: its releases outlive serve, and the next serve takes them over (dispose() stops them).
    await host.serve({ keepApps: true });
    const key = await host.key('dev', 'acme');
    app = await host.json(['create', '--type', 'node', 'storefront', '--region', 'par', '--org', 'acme']);
    other = await host.json(['create', '--type', 'node', 'rival', '--region', 'par', '--org', 'globex']);
    const repo = await host.repository('host/facts');
    await host.git(repo, ['remote', 'add', 'runplan', app.gitRemote]);
    await host.cli(['env', 'set', 'RELEASE_MARK', 'one', '--app', app.id]);
    const pushed = await host.push(repo, 'runplan', key);
    expect(pushed.code, pushed.output).toBe(0);
    expect(pushed.output).toContain(`==> release 1 serves https://${appHostOf(app.id)}:${host.ports.https}/`);
  }, 300_000);

  afterAll(async () => {
    await host?.dispose();
  });

  it('names an application app-<uuid>.<domain>, a valid DNS name, and serves it there over HTTPS', async () => {
    expect(app.url).toBe(`https://${appHostOf(app.id)}:${host.ports.https}/`);
    expect((await host.json<{ url: string }>(['open', '--app', app.id])).url).toBe(app.url);
    expect(await facts(app.id)).toMatchObject({ appId: app.id, forwardedHost: appHostOf(app.id), forwardedProto: 'https', release: 'one' });
  });

  it('answers the old app_<uuid> name with a permanent redirect (308) to the new name, same path', async () => {
    const plain = await host.get(`${app.id}.localhost`, '/orders?page=2', { plain: true });
    expect(plain.status).toBe(308);
    expect(plain.headers.location).toBe(`http://${appHostOf(app.id)}:${host.ports.http}/orders?page=2`);
    // Over HTTPS as on a host upgraded from the old names: an earlier serve allowed the old name a certificate.
    await writeFile(join(host.data, 'edge', 'names', `${app.id}.localhost`), '');
    const secure = await host.get(`${app.id}.localhost`, '/orders?page=2');
    expect(secure.status).toBe(308);
    expect(secure.headers.location).toBe(`https://${appHostOf(app.id)}:${host.ports.https}/orders?page=2`);
  });

  it('serves a custom domain added with the CLI at once over HTTPS, with X-Forwarded-Host the domain, and lists it', async () => {
    const added = await host.json<{ domain: DomainView }>(['domain', 'add', 'Shop.Example.Test', '--app', 'storefront', '--org', 'acme']);
    expect(added.domain).toMatchObject({ name: DOMAIN, appId: app.id, app: 'storefront', org: 'acme', url: `https://${DOMAIN}:${host.ports.https}/` });
    expect(await facts(DOMAIN)).toMatchObject({ appId: app.id, forwardedHost: DOMAIN, forwardedProto: 'https', release: 'one' });
    expect((await host.get(DOMAIN, '/', { plain: true })).json()).toMatchObject({ appId: app.id, forwardedHost: DOMAIN, forwardedProto: 'http' });
    // Adding it again to the same application changes nothing.
    expect((await host.cli(['domain', 'add', DOMAIN, '--app', app.id])).code).toBe(0);
    for (const args of [['domains'], ['domains', '--app', 'storefront', '--org', 'acme'], ['domains', '--org', 'acme']]) {
      expect(
        (await host.json<{ domains: DomainView[] }>(args)).domains.map((d) => [d.name, d.appId]),
        args.join(' '),
      ).toEqual([[DOMAIN, app.id]]);
    }
    expect((await host.json<{ domains: DomainView[] }>(['domains', '--org', 'globex'])).domains).toEqual([]);
    expect((await host.cli(['domains'])).stdout).toContain(`${DOMAIN}  acme/storefront  https://${DOMAIN}:${host.ports.https}/`);
  });

  it("refuses another organization's add of a taken domain without naming the application that has it; the operator is told which", async () => {
    const refused = await host.cli(['domain', 'add', DOMAIN, '--app', 'rival', '--org', 'globex']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(HostErrors.DOMAIN_TAKEN.code);
    expect(refused.stderr).toContain(`${DOMAIN} is taken`);
    for (const secret of [app.id, 'storefront', 'acme']) expect(refused.stderr).not.toContain(secret);
    const asJson = await host.cli(['domain', 'add', DOMAIN, '--app', 'rival', '--org', 'globex', '--json']);
    expect(JSON.parse(asJson.stdout).error).toMatchObject({ code: HostErrors.DOMAIN_TAKEN.code });
    expect(asJson.stdout).not.toContain(app.id);
    const operator = await host.cli(['domain', 'add', DOMAIN, '--app', other.id]);
    expect(operator.stderr).toContain(HostErrors.DOMAIN_TAKEN.code);
    expect(operator.stderr).toContain(`acme/storefront (${app.id})`);
    // Another organization cannot remove it either: to it, no application has it.
    const removal = await host.cli(['domain', 'rm', DOMAIN, '--org', 'globex']);
    expect(removal.stderr).toContain(HostErrors.DOMAIN_NOT_FOUND.code);
    expect(removal.stderr).not.toContain(app.id);
    // Still the storefront's.
    expect((await facts(DOMAIN)).appId).toBe(app.id);
    // Bad names, the host's own names among them, are refused before anything is recorded.
    for (const bad of ['*.example.test', 'bad_name.example.test', 'console.localhost', appHostOf(other.id)]) {
      const answer = await host.cli(['domain', 'add', bad, '--app', other.id]);
      expect(answer.code, bad).toBe(2);
      expect(answer.stderr, bad).toContain(HostErrors.DOMAIN_INVALID.code);
    }
    expect((await host.json<{ domains: DomainView[] }>(['domains'])).domains.map((d) => d.name)).toEqual([DOMAIN]);
  });

  it('keeps serving a custom domain through a new release and a restart of serve (rebuilt from the store)', async () => {
    await host.cli(['env', 'set', 'RELEASE_MARK', 'two', '--app', app.id]);
    expect((await host.cli(['restart', '--app', app.id])).code).toBe(0);
    expect(await facts(DOMAIN)).toMatchObject({ release: 'two', forwardedHost: DOMAIN });
    const { pid } = await facts(DOMAIN);
    await host.stop();
    // Whatever run/domains/ holds when serve starts, the store's domains are served; a release taken over as it
    // runs (as after an upgrade from the app_ names) has its app- name allowed a certificate again.
    await rm(join(host.data, 'run', 'domains'), { recursive: true, force: true });
    await rm(join(host.data, 'edge', 'names', appHostOf(app.id)));
    await host.serve({ keepApps: true });
    expect(existsSync(join(host.data, 'edge', 'names', appHostOf(app.id)))).toBe(true);
    await expect.poll(async () => (await host.get(DOMAIN, '/').catch(() => undefined))?.status, { timeout: 60_000, interval: 500 }).toBe(200);
    expect(await facts(DOMAIN)).toMatchObject({ appId: app.id, release: 'two', forwardedHost: DOMAIN, pid });
  }, 120_000);

  it('adds and removes custom domains from the console, as the organization signed in', async () => {
    const token = (await host.cli(['token', '--org', 'acme'])).stdout.split('\n')[0] as string;
    const acme = new ConsoleClient(host);
    await acme.signIn(token);
    const information = await acme.page(`/apps/${app.id}`);
    expect(information).toContain('Custom domains');
    expect(information).toContain(`data-domain="${DOMAIN}"`);
    const added = await acme.post(`/apps/${app.id}/domains/add`, { name: 'www.example.test' });
    expect(added.status).toBe(303);
    expect(await acme.page(`/apps/${app.id}`)).toContain('data-domain="www.example.test"');
    expect(await facts('www.example.test')).toMatchObject({ appId: app.id, forwardedHost: 'www.example.test' });
    // Another organization's member is told only that it is taken.
    const globex = new ConsoleClient(host);
    await globex.signIn((await host.cli(['token', '--org', 'globex'])).stdout.split('\n')[0] as string);
    await globex.post(`/apps/${other.id}/domains/add`, { name: 'www.example.test' });
    const refusal = await globex.page(`/apps/${other.id}`);
    expect(refusal).toContain(HostErrors.DOMAIN_TAKEN.code);
    expect(refusal).not.toContain(app.id);
    const removed = await acme.post(`/apps/${app.id}/domains/remove`, { name: 'www.example.test' });
    expect(removed.status).toBe(303);
    expect(await acme.page(`/apps/${app.id}`)).not.toContain('data-domain="www.example.test"');
    expect((await host.get('www.example.test', '/')).status).toBe(404);
  });

  it('stops serving a removed custom domain at once, while the default name still answers', async () => {
    const removed = await host.json<{ removed: DomainView }>(['domain', 'rm', DOMAIN]);
    expect(removed.removed).toMatchObject({ name: DOMAIN, appId: app.id });
    // Its certificate was issued already: the handshake succeeds, and the edge answers as for any unknown name.
    const gone = await host.get(DOMAIN, '/');
    expect(gone.status).toBe(404);
    expect(gone.body).toBe(UNKNOWN_HOST);
    expect((await host.get(DOMAIN, '/', { plain: true })).status).toBe(404);
    expect((await facts(app.id)).appId).toBe(app.id);
    expect((await host.json<{ domains: DomainView[] }>(['domains'])).domains).toEqual([]);
    const again = await host.cli(['domain', 'rm', DOMAIN]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(HostErrors.DOMAIN_NOT_FOUND.code);
    // Free again: another application may take it.
    expect((await host.json<{ domain: DomainView }>(['domain', 'add', DOMAIN, '--app', 'rival', '--org', 'globex'])).domain.appId).toBe(other.id);
  });
});

/** The console over HTTPS through the edge, as a browser's requests: its session cookie and each page's form token. */
class ConsoleClient {
  private cookie = '';
  private csrf = '';

  constructor(private readonly host: TestHost) {}

  async signIn(token: string): Promise<void> {
    const answer = await this.request('POST', '/sign-in', `token=${encodeURIComponent(token)}`);
    expect(answer.status).toBe(303);
    this.cookie = String(answer.headers['set-cookie']).split(';')[0] as string;
  }

  async page(path: string): Promise<string> {
    const answer = await this.request('GET', path);
    expect(answer.status, answer.body).toBe(200);
    this.csrf = /name="_csrf" value="([^"]+)"/.exec(answer.body)?.[1] ?? this.csrf;
    return answer.body;
  }

  async post(path: string, fields: Record<string, string>): Promise<{ status: number }> {
    if (this.csrf === '') await this.page('/');
    return this.request('POST', path, new URLSearchParams({ ...fields, _csrf: this.csrf }).toString());
  }

  private request(method: string, path: string, body?: string) {
    return this.host.get(`console.localhost`, path, {
      method,
      ...(body === undefined ? {} : { body }),
      headers: { ...(this.cookie ? { cookie: this.cookie } : {}), ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    });
  }
}
