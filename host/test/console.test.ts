import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { ROOT, TestHost } from './helpers/test-host.js';

const run = promisify(execFile);

/** Debian's chromium: the test prerequisites install it (no browser is downloaded). */
const CHROMIUM = '/usr/bin/chromium';
/** Each page as the tests saw it: with the test output, not committed (docs/ holds the ones chosen for the README). */
const SCREENSHOTS = join(ROOT, 'test-output', 'console');

/**
 * The web console in a real browser (Debian's chromium, driven by
 * playwright-core), against a real host over HTTPS through its edge: the browser
 * trusts the edge's root certificate through an NSS database of its own home
 * folder, as a person would import it — never by ignoring certificate errors.
 */
/** A form POST made by the page's own script (its cookies sent): the status (0 for a redirect, not followed) and the page it answered. */
function postFrom(p: Page, url: string, fields: Record<string, string>): Promise<{ status: number; text: string }> {
  return p.evaluate(
    async ([to, body]) => {
      const answer = await fetch(to, { method: 'POST', body: new URLSearchParams(body), redirect: 'manual' });
      return { status: answer.status, text: await answer.text() };
    },
    [url, fields] as const,
  );
}

describe('runplan-host console in a browser', () => {
  let host: TestHost;
  let browser: Browser;
  let acme: BrowserContext;
  let page: Page;
  let key: string;
  let consoleUrl: string;
  let appId = '';
  let repo = '';

  const shot = async (p: Page, name: string) => {
    await mkdir(SCREENSHOTS, { recursive: true });
    await p.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };

  const signIn = async (context: BrowserContext, token: string): Promise<Page> => {
    const p = await context.newPage();
    await p.goto(`${consoleUrl}sign-in`);
    await p.getByLabel(/Token/).fill(token);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(consoleUrl);
    return p;
  };

  beforeAll(async () => {
    // On the machine's network: a browser on the host's own machine sees each release's own network come
    // (a veth pair) and aborts what it is loading (Chromium's ERR_NETWORK_CHANGED); the console is what is tried here.
    host = await TestHost.create({ initArgs: ['--release-network', 'shared'] });
    await host.serve();
    key = await host.key('dev', 'acme');
    consoleUrl = `https://console.localhost:${host.ports.https}/`;
    // The browser's own home: its NSS database trusts the edge's root certificate, and nothing else is changed.
    const home = await tempDir('runplan-console-browser-');
    const nssdb = join(home, '.pki', 'nssdb');
    await mkdir(nssdb, { recursive: true });
    await run('certutil', ['-d', `sql:${nssdb}`, '-N', '--empty-password']);
    await run('certutil', ['-d', `sql:${nssdb}`, '-A', '-t', 'C,,', '-n', 'runplan-host edge', '-i', host.rootCertificate]);
    browser = await chromium.launch({ executablePath: CHROMIUM, env: { ...process.env, HOME: home }, args: ['--no-sandbox'] });
    acme = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const token = (await host.cli(['token', '--org', 'acme'])).stdout.split('\n')[0] as string;
    page = await signIn(acme, token);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await host?.dispose();
  });

  it('creates an application, takes a git push to the URL its Information shows, streams the deploy, and the application answers', async () => {
    await page.getByRole('link', { name: 'Create an application' }).click();
    await page.getByLabel('Type').selectOption('node');
    await page.getByLabel('Name', { exact: true }).fill('web');
    await page.getByLabel('Zone').selectOption('par');
    await shot(page, 'create-application');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/\/apps\/app_[0-9a-f-]+$/);
    expect(await page.getByRole('status').textContent()).toBe('Created.');
    appId = /\/apps\/(app_[0-9a-f-]+)/.exec(page.url())?.[1] as string;
    const remote = (await page.locator('#git-remote').textContent()) as string;
    expect(remote).toBe(`git+ssh://${host.sshUser}@127.0.0.1:${host.ports.ssh}/${appId}.git`);
    await shot(page, 'information');

    // The logs page is open before the push: the deploy's lines arrive on it as they are written.
    const logs = await acme.newPage();
    await logs.goto(`${consoleUrl}apps/${appId}/logs`);
    // Nothing written yet: the page says so, instead of an empty panel.
    expect(await logs.locator('#log-empty').textContent()).toContain('No lines yet');
    expect(await logs.locator('#log').isVisible()).toBe(false);
    repo = await host.repository('node/express');
    await host.git(repo, ['remote', 'add', 'runplan', remote]);
    const push = await host.push(repo, 'runplan', key);
    expect(push.code, push.output).toBe(0);
    // The fixture has no health-check path: the check is its port (Node.js rule 5).
    await expect.poll(() => logs.locator('#log').textContent(), { timeout: 30_000 }).toMatch(/Port \d+ accepts connections/);
    await expect.poll(() => logs.locator('#log').textContent(), { timeout: 30_000 }).toContain('==> release 1 serves');
    expect(await logs.locator('#log-empty').isVisible()).toBe(false);
    await shot(logs, 'logs');

    await page.goto(consoleUrl);
    expect(await page.locator('main').textContent()).toContain('release 1 serving');
    await shot(page, 'applications');
    await page.goto(`${consoleUrl}apps/${appId}`);
    const url = (await page.locator('#app-url').getAttribute('href')) as string;
    const app = await acme.newPage();
    const answer = await app.goto(url);
    expect(answer?.status()).toBe(200);
    expect(JSON.parse((await app.locator('body').textContent()) as string)).toMatchObject({ app: 'express', nodeEnv: null });
  }, 300_000);

  it('keeps an added variable pending (the application does not see it) until Update Changes, then a restart gives it to the application', async () => {
    await page.goto(`${consoleUrl}apps/${appId}/env`);
    // Nothing pending, nothing to update.
    expect(await page.getByRole('button', { name: 'Update Changes' }).count()).toBe(0);
    await page.getByLabel('Name', { exact: true }).fill('NODE_ENV');
    await page.getByLabel('Value').fill('staging');
    await page.getByRole('button', { name: 'Add' }).click();
    await expect.poll(() => page.locator('tr[data-variable="NODE_ENV"]').textContent(), { timeout: 30_000 }).toContain('pending addition');
    await shot(page, 'environment-pending');
    // Pending is the console's: the host has nothing yet.
    expect((await host.json<{ variables: { name: string }[] }>(['env', '--app', appId])).variables).toEqual([]);

    // A name the host refuses: Update Changes saves nothing of the batch and says why.
    await page.getByLabel('Name', { exact: true }).fill('1BAD');
    await page.getByRole('button', { name: 'Add' }).click();
    await page.getByRole('button', { name: 'Update Changes' }).click();
    const refusal = (await page.getByRole('alert').textContent()) as string;
    // The code once, then what happened and the fix.
    expect(refusal.match(/RUNPLAN_HOST_E_INPUT_VARIABLE/g)).toHaveLength(1);
    expect((await host.json<{ variables: { name: string }[] }>(['env', '--app', appId])).variables).toEqual([]);
    await page.locator('tr[data-variable="1BAD"]').getByRole('button', { name: 'Remove' }).click();

    await page.getByRole('button', { name: 'Update Changes' }).click();
    await expect.poll(() => page.locator('tr[data-variable="NODE_ENV"]').textContent(), { timeout: 30_000 }).toContain('saved, applied at the next restart or deploy');
    expect(await page.getByRole('button', { name: 'Update Changes' }).count()).toBe(0);
    expect((await host.get(appId, '/')).json<{ nodeEnv: string | null }>().nodeEnv).toBeNull();
    await page.getByRole('button', { name: 'Restart now' }).click();
    await page.waitForURL(`${consoleUrl}apps/${appId}/logs`);
    await expect.poll(async () => (await host.get(appId, '/')).json<{ nodeEnv: string | null }>().nodeEnv, { timeout: 120_000, interval: 1_000 }).toBe('staging');
    // Applied: the State says in which release, and nothing is offered that would change nothing.
    await page.goto(`${consoleUrl}apps/${appId}/env`);
    expect(await page.locator('tr[data-variable="NODE_ENV"]').textContent()).toMatch(/applied \(release \d+\)/);
    expect(await page.getByRole('button', { name: 'Restart now' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Update Changes' }).count()).toBe(0);
  }, 300_000);

  it("turns the dedicated build instance on from Information: the next build's Node.js heap is sized for it, the application's stays its instance's", async () => {
    const hook = "node -e \"require('fs').writeFileSync('build-heap.txt', process.env.NODE_OPTIONS)\"";
    expect((await host.cli(['env', 'set', 'CC_POST_BUILD_HOOK', hook, '--app', appId])).code).toBe(0);
    await page.goto(`${consoleUrl}apps/${appId}`);
    const option = page.getByLabel(/Dedicated build instance/);
    expect(await option.isChecked()).toBe(false);
    await option.check();
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Dedicated build instance on');
    expect(await page.getByLabel(/Dedicated build instance/).isChecked()).toBe(true);
    await shot(page, 'information-build-instance');
    expect(await host.json<{ dedicatedBuildInstance: boolean }>(['build-instance', '--app', appId])).toEqual({ dedicatedBuildInstance: true });
    await page.getByRole('button', { name: 'Restart' }).click();
    // The host's build instance is 4 GiB (three quarters for the heap), the application's 1 GiB.
    await expect.poll(async () => (await host.get(appId, '/')).json<{ buildHeap: string | null }>().buildHeap, { timeout: 120_000, interval: 1_000 }).toBe('--max-old-space-size=3072');
    expect((await host.get(appId, '/')).json<{ nodeOptions: string | null }>().nodeOptions).toBe('--max-old-space-size=768');
    // Off again from the command line: the next build is sized for the application's instance.
    expect((await host.cli(['build-instance', 'shared', '--app', appId])).stdout).toContain('builds on its own instance from its next deploy or restart');
    expect((await host.cli(['env', 'rm', 'CC_POST_BUILD_HOOK', '--app', appId])).code).toBe(0);
  }, 300_000);

  it('shows a failing deploy\'s "Health check failed:" and its per-path lines while the old release keeps serving', async () => {
    await page.goto(`${consoleUrl}apps/${appId}/env`);
    await page.getByLabel('Name', { exact: true }).fill('CC_HEALTH_CHECK_PATH');
    await page.getByLabel('Value').fill('/missing');
    await page.getByRole('button', { name: 'Add' }).click();
    await page.getByRole('button', { name: 'Update Changes' }).click();
    await page.getByRole('button', { name: 'Restart now' }).click();
    await expect.poll(() => page.locator('#log').textContent(), { timeout: 150_000, interval: 1_000 }).toContain('Health check failed:');
    expect(await page.locator('#log').textContent()).toContain('Response from GET /missing is 404');
    await shot(page, 'logs-failed-deploy');
    expect((await host.get(appId, '/')).json<{ nodeEnv: string | null }>().nodeEnv).toBe('staging');
  }, 300_000);

  it('creates a PostgreSQL add-on with the Link toggle on for an application: its next release sees POSTGRESQL_ADDON_URI; the add-on page masks the secrets', async () => {
    const facts = await host.json<{ id: string; gitRemote: string }>(['create', '--type', 'node', 'facts', '--region', 'par', '--org', 'acme']);
    expect((await host.cli(['env', 'set', 'CC_HEALTH_CHECK_PATH', '/health', '--app', facts.id])).code).toBe(0);
    const factsRepo = await host.repository('host/facts');
    await host.git(factsRepo, ['remote', 'add', 'runplan', facts.gitRemote]);
    const push = await host.push(factsRepo, 'runplan', key);
    expect(push.code, push.output).toBe(0);
    expect((await host.get(facts.id, '/')).json<{ addonVariables: string[] }>().addonVariables).toEqual([]);

    await page.goto(`${consoleUrl}addons`);
    await page.getByLabel('Kind').selectOption('postgresql');
    await page.getByLabel('Name', { exact: true }).fill('db');
    await page.getByLabel('facts (acme)').check();
    await shot(page, 'addon-create');
    await page.getByRole('button', { name: 'Create' }).click();
    // The form posts from /addons back to /addons: the notice is what says the new page came (PostgreSQL's cluster may be made first).
    // Either the notice or the form again with its error: an error is shown at once, not waited on.
    await page.locator('[role=status], [role=alert]').first().waitFor({ timeout: 120_000 });
    expect(await page.getByRole('alert').count(), (await page.getByRole('alert').allTextContents()).join('\n')).toBe(0);
    expect(page.url()).toBe(`${consoleUrl}addons`);
    expect(await page.getByRole('status').textContent()).toContain('each application toggled is being linked');
    await expect.poll(async () => (await host.get(facts.id, '/')).json<{ addonVariables: string[] }>().addonVariables, { timeout: 120_000, interval: 1_000 }).toContain('POSTGRESQL_ADDON_URI');

    await page.getByRole('link', { name: 'db' }).click();
    const password = (await host.json<{ variables: { name: string; value: string }[] }>(['addon', 'env', 'db', '--show'])).variables.find((v) => v.name === 'POSTGRESQL_ADDON_PASSWORD')
      ?.value as string;
    expect(password.length).toBeGreaterThan(8);
    expect(await page.locator('tr[data-variable="POSTGRESQL_ADDON_PASSWORD"]').textContent()).toContain('***');
    expect(await page.content()).not.toContain(password);
    await shot(page, 'addon');
    await page.getByRole('link', { name: 'Reveal secret values' }).click();
    expect(await page.locator('tr[data-variable="POSTGRESQL_ADDON_PASSWORD"]').textContent()).toContain(password);

    // The link made release 2 through the gate; its page says what its plan changed.
    await page.goto(`${consoleUrl}apps/${facts.id}/dependencies`);
    expect(await page.locator('main').textContent()).toMatch(/Linked add-ons\s*db \(postgresql\)/);
    await shot(page, 'dependencies');
    await page.goto(`${consoleUrl}apps/${facts.id}/releases`);
    await shot(page, 'releases');
    await page.getByRole('link', { name: 'Release 2' }).click();
    expect(await page.locator('main').textContent()).toContain('Plan changes since release 1');
    // The deploy log a tenant reads tells steps by what they do, not by the script they run.
    expect(await page.locator('pre.log').textContent()).not.toMatch(/node -e '|more lines\)/);
    expect(await page.locator('main').textContent()).toContain('db');
    await shot(page, 'release');
  }, 300_000);

  it('is readable at a phone width', async () => {
    const phone = await acme.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${consoleUrl}apps/${appId}`);
    // Nothing wider than the screen: the page never scrolls sideways.
    expect(await phone.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await shot(phone, 'information-phone');
    // A long variable name in a narrow column breaks after an underscore, never inside a word.
    expect((await host.cli(['env', 'set', 'CONSOLE_GREETING_OF_THE_DAY_FOR_EVERY_VISITOR', 'hello '.repeat(20), '--app', appId])).code).toBe(0);
    await phone.goto(`${consoleUrl}apps/${appId}/env`);
    // In the page (a string: this file is compiled without the DOM's types): each part of a name between two breaks stays on one line.
    const broken = await phone.evaluate<string[]>(`[...document.querySelectorAll('code.name')].flatMap((name) =>
      [...name.childNodes].filter((node) => node.nodeType === Node.TEXT_NODE).filter((node) => {
        const range = document.createRange();
        range.selectNodeContents(node);
        return range.getClientRects().length > 1;
      }).map((node) => node.textContent))`);
    expect(broken).toEqual([]);
    expect(await phone.locator('tr[data-variable="CONSOLE_GREETING_OF_THE_DAY_FOR_EVERY_VISITOR"] code.name').evaluate((e) => e.getClientRects().length)).toBeGreaterThan(1);
    await shot(phone, 'environment-phone');
    await phone.close();
  });

  it("refuses another organization's member, by page and by forged request", async () => {
    const other = await browser.newContext();
    try {
      const intruder = await signIn(other, (await host.cli(['token', '--org', 'other'])).stdout.split('\n')[0] as string);
      expect(await intruder.locator('main').textContent()).not.toContain('web');
      const page404 = await intruder.goto(`${consoleUrl}apps/${appId}/env`);
      expect(page404?.status()).toBe(404);
      // The error page keeps the way on (the navigation, the organization, Sign out), and its fix is the console's, not the command line's.
      expect(await intruder.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Applications' }).count()).toBe(1);
      expect(await intruder.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
      expect(await intruder.locator('.who').textContent()).toBe('organization other');
      const notFound = (await intruder.locator('main').textContent()) as string;
      expect(notFound.match(/RUNPLAN_HOST_E_APP_NOT_FOUND/g)).toHaveLength(1);
      expect(notFound).toContain('Open the application from the Applications page');
      expect(notFound).not.toContain('--app');
      await shot(intruder, 'not-found');
      // A form with its own session's CSRF token, aimed at the other organization's application: not found.
      await intruder.goto(`${consoleUrl}apps/new`);
      const csrf = (await intruder.locator('input[name=_csrf]').first().getAttribute('value')) as string;
      expect(await postFrom(intruder, `${consoleUrl}apps/${appId}/env/add`, { _csrf: csrf, name: 'STOLEN', value: '1' })).toMatchObject({
        status: 404,
        text: expect.stringContaining('RUNPLAN_HOST_E_APP_NOT_FOUND'),
      });
      // acme's own session without its CSRF token (a request another site could make): refused.
      expect(await postFrom(page, `${consoleUrl}apps/${appId}/env/add`, { name: 'FORGED', value: '1' })).toMatchObject({
        status: 403,
        text: expect.stringContaining('RUNPLAN_HOST_E_CONSOLE_FORM_TOKEN'),
      });
      await page.goto(`${consoleUrl}apps/${appId}/env`);
      expect(await page.locator('main').textContent()).not.toMatch(/STOLEN|FORGED/);
      // A form another site posts (its Origin is not the console's), sign-in included: refused.
      const crossSite = await host.get('console', '/sign-in', { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=x' });
      expect(crossSite.status).toBe(403);
      expect(crossSite.body).toContain('RUNPLAN_HOST_E_CONSOLE_FORM_TOKEN');
      // Without a session at all: sent to sign in.
      const anonymous = await (await browser.newContext()).newPage();
      await anonymous.goto(`${consoleUrl}apps/${appId}`);
      expect(anonymous.url()).toBe(`${consoleUrl}sign-in`);
      expect(await postFrom(anonymous, `${consoleUrl}apps/${appId}/env/add`, { name: 'FORGED', value: '1' })).toMatchObject({
        status: 401,
        text: expect.stringContaining('RUNPLAN_HOST_E_CONSOLE_SIGNED_OUT'),
      });
      // A token of nobody does not sign in.
      await anonymous.getByLabel(/Token/).fill('rpo.acme.not-the-mac');
      await anonymous.getByRole('button', { name: 'Sign in' }).click();
      expect(((await anonymous.locator('main').textContent()) as string).match(/RUNPLAN_HOST_E_CONSOLE_SIGN_IN/g)).toHaveLength(1);
      expect((await page.goto(`${consoleUrl}no-such-page`))?.status()).toBe(404);
      expect(await page.locator('main').textContent()).toContain('RUNPLAN_HOST_E_CONSOLE_PAGE_NOT_FOUND');
    } finally {
      await other.close();
    }
  }, 120_000);
});
