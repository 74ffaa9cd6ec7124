import type { PlanChange } from 'runplan';
import type { AddonView, AppView, DomainView, ReleaseView, VariableView } from '../service.js';
import { type Html, html } from './html.js';
import type { Member, PendingChanges } from './sessions.js';

/** What every signed-in page knows: who is signed in, and the token its forms send back. */
export interface PageContext {
  readonly member: Member;
  readonly csrf: string;
}

function memberName(member: Member): string {
  return member.kind === 'host' ? 'host administrator (every organization)' : `organization ${member.org}`;
}

/** The page around every screen: one stylesheet, one script, nothing inline (the content security policy allows no inline code). */
function layout(title: string, body: Html, context?: PageContext): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · runplan-host</title>
<link rel="stylesheet" href="/assets/console.css">
<script src="/assets/console.js" defer></script>
</head>
<body>
<header class="top">
  <a class="brand" href="/">runplan-host</a>
  ${
    context
      ? html`<nav aria-label="Main"><a href="/">Applications</a> <a href="/addons">Add-ons</a></nav>
  <form method="post" action="/sign-out" class="inline">${csrfField(context)}<span class="who">${memberName(context.member)}</span> <button type="submit">Sign out</button></form>`
      : ''
  }
</header>
<main id="main">
${body}
</main>
</body>
</html>
`;
}

function csrfField(context: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${context.csrf}">`;
}

export function errorBox(message: string | undefined): Html {
  return message ? html`<p class="error" role="alert">${message}</p>` : html``;
}

/** A page that could not be shown: its error, and the way on (the navigation, the organization and Sign out once signed in). */
export function errorPage(message: string, context?: PageContext): Html {
  return layout(
    'Error',
    html`<h1>This page cannot be shown</h1>
${errorBox(message)}
<p>${context ? html`<a href="/">Back to the applications</a>` : html`<a href="/sign-in">Sign in</a>`}</p>`,
    context,
  );
}

/** A variable's name, breakable only after its underscores (CONSOLE_<wbr>GREETING, never CONSOLE_GREETIN|G). */
function variableName(name: string): Html {
  return html`<code class="name">${name.split('_').map((part, i) => (i === 0 ? part : html`_<wbr>${part}`))}</code>`;
}

export function signInPage(error?: string): Html {
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
${errorBox(error)}
<form method="post" action="/sign-in" class="stack">
  <label for="token">Token (the host's API token, or your organization's)</label>
  <input id="token" name="token" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>`,
  );
}

function releaseState(app: AppView): string {
  if (app.serving) return `release ${app.serving.release} serving`;
  return app.currentRelease === null ? 'never deployed' : `release ${app.currentRelease} (not serving)`;
}

export function homePage(context: PageContext, apps: readonly AppView[]): Html {
  return layout(
    'Applications',
    html`<h1>Applications</h1>
<p><a class="button" href="/apps/new">Create an application</a></p>
${
  apps.length === 0
    ? html`<p>No application yet.</p>`
    : html`<table>
<caption>Applications of ${context.member.kind === 'org' ? context.member.org : 'every organization'}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Organization</th><th scope="col">Type</th><th scope="col">Zone</th><th scope="col">State</th><th scope="col">URL</th></tr></thead>
<tbody>
${apps.map(
  (a) => html`<tr><td><a href="/apps/${a.id}">${a.name}</a></td><td>${a.org}</td><td>${a.type}</td><td>${a.zone}</td><td>${releaseState(a)}</td><td><a href="${a.url}">${a.url}</a></td></tr>\n`,
)}
</tbody>
</table>`
}`,
    context,
  );
}

export interface NewAppValues {
  readonly name?: string;
  readonly org?: string;
  readonly type?: string;
  readonly zone?: string;
}

/** The service's zones (the CLI's --region). */
const ZONES = [
  ['par', 'par (Paris)'],
  ['mtl', 'mtl (Montreal)'],
] as const;

function options(values: readonly (readonly [string, string])[], chosen: string | undefined): Html[] {
  return values.map(([value, label]) => html`<option value="${value}"${chosen === value ? html` selected` : ''}>${label}</option>`);
}

export function newAppPage(context: PageContext, values: NewAppValues, error?: string): Html {
  const org = context.member.kind === 'org' ? context.member.org : values.org;
  return layout(
    'Create an application',
    html`<h1>Create an application</h1>
${errorBox(error)}
<form method="post" action="/apps" class="stack">
  ${csrfField(context)}
  <label for="type">Type</label>
  <select id="type" name="type">${options(
    [
      ['node', 'Node.js'],
      ['ruby', 'Ruby on Rails'],
      ['play1', 'Play Framework 1.x'],
    ],
    values.type,
  )}</select>
  <label for="name">Name</label>
  <input id="name" name="name" required pattern="[a-z][a-z0-9-]{0,39}" value="${values.name ?? ''}" aria-describedby="name-help">
  <small id="name-help">Lower-case letters, digits and dashes, starting with a letter.</small>
  <label for="zone">Zone</label>
  <select id="zone" name="zone">${options(ZONES, values.zone)}</select>
  <label for="org">Organization</label>
  <input id="org" name="org" required value="${org ?? ''}"${context.member.kind === 'org' ? html` readonly` : ''}>
  <button type="submit">Create</button>
</form>`,
    context,
  );
}

export type AppTab = 'information' | 'environment' | 'dependencies' | 'releases' | 'logs';

const TABS: readonly (readonly [AppTab, string, string])[] = [
  ['information', 'Information', ''],
  ['environment', 'Environment variables', '/env'],
  ['dependencies', 'Service dependencies', '/dependencies'],
  ['releases', 'Releases', '/releases'],
  ['logs', 'Logs', '/logs'],
];

export function appPage(context: PageContext, app: AppView, tab: AppTab, body: Html, notice?: string): Html {
  return layout(
    `${app.name}: ${TABS.find(([t]) => t === tab)?.[1] ?? ''}`,
    html`<h1>${app.name}</h1>
<nav aria-label="Application" class="tabs">${TABS.map(([t, label, path]) => html`<a href="/apps/${app.id}${path}"${t === tab ? html` aria-current="page"` : ''}>${label}</a> `)}</nav>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${body}`,
    context,
  );
}

function actionButton(context: PageContext, action: string, label: string, extra?: Html): Html {
  return html`<form method="post" action="${action}" class="inline">${csrfField(context)}${extra ?? ''}<button type="submit">${label}</button></form>`;
}

/** The application's custom domains, each with its Remove, and the form that adds one (served at once). */
function domainsSection(context: PageContext, app: AppView, domains: readonly DomainView[]): Html {
  return html`<h2>Custom domains</h2>
${
  domains.length === 0
    ? html`<p>No custom domain: the application answers at its address above only.</p>`
    : html`<ul class="domains">
${domains.map((d) => html`<li data-domain="${d.name}"><a href="${d.url}">${d.name}</a> ${actionButton(context, `/apps/${app.id}/domains/remove`, 'Remove', html`<input type="hidden" name="name" value="${d.name}">`)}</li>\n`)}
</ul>`
}
<form method="post" action="/apps/${app.id}/domains/add" class="stack">
  ${csrfField(context)}
  <label for="domain-name">Domain (its DNS pointed at this host)</label>
  <input id="domain-name" name="name" required autocomplete="off" placeholder="shop.example.com">
  <button type="submit">Add domain</button>
</form>`;
}

export function informationBody(context: PageContext, app: AppView, domains: readonly DomainView[] = []): Html {
  return html`<dl class="facts">
<dt>Git deployment URL</dt><dd><code id="git-remote">${app.gitRemote}</code> <button type="button" class="copy" data-copy="git-remote">Copy</button></dd>
<dt>Address</dt><dd><a id="app-url" href="${app.url}">${app.url}</a></dd>
<dt>Type</dt><dd>${app.type}</dd>
<dt>Zone</dt><dd>${app.zone}</dd>
<dt>Organization</dt><dd>${app.org}</dd>
<dt>Application id</dt><dd><code>${app.id}</code></dd>
<dt>Current release</dt><dd>${releaseState(app)}</dd>
<dt>Build instance</dt><dd><form method="post" action="/apps/${app.id}/build-instance" class="inline">${csrfField(context)}<label><input type="checkbox" name="dedicated" value="on" id="dedicated-build-instance"${app.dedicatedBuildInstance ? html` checked` : ''}> Dedicated build instance (${app.buildInstance.cpus} CPUs, ${app.buildInstance.memoryMb} MiB)</label> <button type="submit">Save</button></form>
<p class="hint">Advised for Ruby applications using webpacker, which need many resources at start: the build's tools (Node.js's heap) are sized for the build instance, the application for its own instance. Applies from the next deploy or restart.</p></dd>
</dl>
<p>Deploy with <code>git push &lt;remote&gt; master</code>, the remote being the URL above.</p>
${domainsSection(context, app, domains)}
${app.currentRelease === null ? '' : html`<p>${actionButton(context, `/apps/${app.id}/restart`, 'Restart')} ${actionButton(context, `/apps/${app.id}/rollback`, 'Roll back to the previous release')}</p>`}`;
}

/** One row of the variables table: what the host holds, then what this session staged over it. */
interface VariableRow {
  readonly name: string;
  readonly value: string;
  readonly secret: boolean;
  readonly state: string;
}

/** A staged value is shown only when revealed: the console cannot tell which are secrets before the host checks them. */
function variableRows(app: AppView, variables: readonly VariableView[], pending: PendingChanges | undefined, revealed: boolean): VariableRow[] {
  const rows = new Map<string, VariableRow>();
  const applied = app.currentRelease === null ? 'saved, applied at the first deploy' : `applied (release ${app.currentRelease})`;
  for (const v of variables) rows.set(v.name, { name: v.name, value: v.value, secret: v.secret, state: v.changed ? 'saved, applied at the next restart or deploy' : applied });
  for (const [name, value] of pending?.set ?? [])
    rows.set(name, { name, value: revealed ? value : '***', secret: rows.get(name)?.secret ?? false, state: rows.has(name) ? 'pending change' : 'pending addition' });
  for (const name of pending?.remove ?? []) {
    const row = rows.get(name);
    if (row) rows.set(name, { ...row, state: 'pending removal' });
  }
  return [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function environmentBody(context: PageContext, app: AppView, variables: readonly VariableView[], removed: readonly string[], pending: PendingChanges | undefined, revealed: boolean): Html {
  const rows = variableRows(app, variables, pending, revealed);
  const staged = (pending?.set.size ?? 0) + (pending?.remove.size ?? 0);
  const saved = variables.some((v) => v.changed) || removed.length > 0;
  return html`<p>A change takes effect only after <strong>Update Changes</strong>, and in the application at its next restart or deploy.</p>
${
  rows.length === 0
    ? html`<p>No variable yet.</p>`
    : html`<table>
<caption>Environment variables of ${app.name}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${rows.map(
  (r) =>
    html`<tr data-variable="${r.name}"><td>${variableName(r.name)}</td><td><code>${r.value}</code></td><td>${r.state}</td><td>${
      r.state === 'pending removal' ? '' : actionButton(context, `/apps/${app.id}/env/remove`, 'Remove', html`<input type="hidden" name="name" value="${r.name}">`)
    }</td></tr>\n`,
)}
</tbody>
</table>`
}
${removed.length > 0 ? html`<p>Removed, applied at the next restart or deploy: ${removed.join(', ')}</p>` : ''}
<p>${revealed ? html`<a href="/apps/${app.id}/env">Mask secret values</a>` : html`<a href="/apps/${app.id}/env?reveal=1">Reveal secret values</a>`}</p>
<h2>Add a variable</h2>
<form method="post" action="/apps/${app.id}/env/add" class="stack">
  ${csrfField(context)}
  <label for="var-name">Name</label>
  <input id="var-name" name="name" required autocomplete="off">
  <label for="var-value">Value</label>
  <input id="var-value" name="value" autocomplete="off">
  <button type="submit">Add</button>
</form>
${staged > 0 ? html`<p>${staged} pending change(s). ${actionButton(context, `/apps/${app.id}/env/update`, 'Update Changes')} ${actionButton(context, `/apps/${app.id}/env/discard`, 'Discard pending changes')}</p>` : ''}
${saved && app.currentRelease !== null ? html`<p>Saved changes reach the application at its next release: ${actionButton(context, `/apps/${app.id}/restart`, 'Restart now')}</p>` : ''}`;
}

export function dependenciesBody(context: PageContext, app: AppView, addons: readonly AddonView[], apps: readonly AppView[], linkedApps: readonly string[]): Html {
  const linked = addons.filter((a) => a.linkedTo.includes(app.name));
  const free = addons.filter((a) => !a.linkedTo.includes(app.name));
  const others = apps.filter((a) => a.id !== app.id && !linkedApps.includes(a.name));
  return html`<h2>Linked add-ons</h2>
${linked.length === 0 ? html`<p>None.</p>` : html`<ul>${linked.map((a) => html`<li>${a.name} (${a.provider}) ${actionButton(context, `/apps/${app.id}/addons/unlink`, 'Unlink', html`<input type="hidden" name="addon" value="${a.name}">`)}</li>`)}</ul>`}
<form method="post" action="/apps/${app.id}/addons/link" class="row">
  ${csrfField(context)}
  <label for="link-addon">Link add-ons</label>
  <select id="link-addon" name="addon">${free.map((a) => html`<option value="${a.name}">${a.name} (${a.provider})</option>`)}</select>
  <button type="submit"${free.length === 0 ? html` disabled` : ''}>Add</button>
</form>
<h2>Linked applications</h2>
${linkedApps.length === 0 ? html`<p>None.</p>` : html`<ul>${linkedApps.map((n) => html`<li>${n} ${actionButton(context, `/apps/${app.id}/links/unlink`, 'Unlink', html`<input type="hidden" name="app" value="${n}">`)}</li>`)}</ul>`}
<form method="post" action="/apps/${app.id}/links/link" class="row">
  ${csrfField(context)}
  <label for="link-app">Link applications</label>
  <select id="link-app" name="app">${others.map((a) => html`<option value="${a.name}">${a.name}</option>`)}</select>
  <button type="submit"${others.length === 0 ? html` disabled` : ''}>Add</button>
</form>
<p>A link or unlink makes a new release through the health check when the application serves: see its <a href="/apps/${app.id}/logs">logs</a>.</p>`;
}

function duration(r: ReleaseView): string {
  if (r.finishedAt === null) return 'under way';
  const ms = Date.parse(r.finishedAt) - Date.parse(r.startedAt);
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '';
}

function outcome(r: ReleaseView): Html {
  return html`${r.status}${r.errorCode ? html` <code>${r.errorCode}</code>` : ''}`;
}

export function releasesBody(app: AppView, releases: readonly ReleaseView[]): Html {
  if (releases.length === 0) return html`<p>No release yet: push to <code>${app.gitRemote}</code>.</p>`;
  return html`<table>
<caption>Releases of ${app.name}, newest first</caption>
<thead><tr><th scope="col">Release</th><th scope="col">Cause</th><th scope="col">Commit</th><th scope="col">Plan digest</th><th scope="col">Outcome</th><th scope="col">Duration</th></tr></thead>
<tbody>
${[...releases]
  .sort((a, b) => b.number - a.number)
  .map(
    (r) =>
      html`<tr><td><a href="/apps/${app.id}/releases/${r.number}">Release ${r.number}</a>${app.currentRelease === r.number ? ' (current)' : ''}</td><td>${r.cause}</td><td><code>${r.commit.slice(0, 12)}</code></td><td><code>${(r.planDigest ?? '').slice(0, 12)}</code></td><td>${outcome(r)}</td><td>${duration(r)}</td></tr>\n`,
  )}
</tbody>
</table>`;
}

/** One release: its facts, what its plan changed from the release before it, and its deploy's lines. */
export function releaseBody(app: AppView, release: ReleaseView, log: readonly string[], changes: readonly PlanChange[] | undefined): Html {
  return html`<h2>Release ${release.number}</h2>
<dl class="facts">
<dt>Cause</dt><dd>${release.cause} (by ${release.by})</dd>
<dt>Commit</dt><dd><code>${release.commit}</code></dd>
<dt>Plan digest</dt><dd><code>${release.planDigest ?? 'not planned'}</code></dd>
<dt>Outcome</dt><dd>${outcome(release)}</dd>
<dt>Duration</dt><dd>${duration(release)}</dd>
<dt>Variables</dt><dd>${release.variableNames.join(', ') || 'none'}</dd>
<dt>Add-ons linked</dt><dd>${release.links.join(', ') || 'none'}</dd>
</dl>
<h2>Plan changes since release ${release.number - 1}</h2>
${
  changes === undefined
    ? html`<p>No earlier release with a plan to compare with.</p>`
    : changes.length === 0
      ? html`<p>The same plan.</p>`
      : html`<table id="plan-diff">
<caption>What changed in the plan, and why (runplan's diffPlans)</caption>
<thead><tr><th scope="col">What</th><th scope="col">Change</th><th scope="col">Before</th><th scope="col">After</th><th scope="col">Why</th></tr></thead>
<tbody>
${changes.map((c) => html`<tr><td>${c.area} <code>${c.subject}</code></td><td>${c.change}</td><td><code>${c.before ?? ''}</code></td><td><code>${c.after ?? ''}</code></td><td>${c.why ?? ''}</td></tr>\n`)}
</tbody>
</table>`
}
<h2>Deploy log</h2>
<pre class="log">${log.map((l) => `${l}\n`)}</pre>
<p><a href="/apps/${app.id}/releases">All releases</a></p>`;
}

export function logsBody(app: AppView, lines: readonly string[]): Html {
  return html`<p>The application's processes and its deploys (pushes, restarts, rollbacks), live.</p>
<p id="log-empty" class="hint"${lines.length > 0 ? html` hidden` : ''}>No lines yet: they appear here as the application's processes and deploys write them${app.currentRelease === null ? html` (its first deploy is a git push to <code>${app.gitRemote}</code>)` : ''}.</p>
<pre id="log" class="log" aria-live="polite" data-events="/apps/${app.id}/logs/events"${lines.length === 0 ? html` hidden` : ''}>${lines.map((l) => `${l}\n`)}</pre>`;
}

export interface NewAddonValues {
  readonly kind?: string;
  readonly name?: string;
  readonly org?: string;
  readonly zone?: string;
}

export function addonsPage(context: PageContext, addons: readonly AddonView[], apps: readonly AppView[], values: NewAddonValues, error?: string, notice?: string): Html {
  const org = context.member.kind === 'org' ? context.member.org : values.org;
  return layout(
    'Add-ons',
    html`<h1>Add-ons</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${
  addons.length === 0
    ? html`<p>No add-on yet.</p>`
    : html`<table>
<caption>Add-ons</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Organization</th><th scope="col">Linked to</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${addons.map(
  (a) =>
    html`<tr><td><a href="/addons/${a.id}">${a.name}</a></td><td>${a.provider}</td><td>${a.org}</td><td>${a.linkedTo.join(', ')}</td><td>${actionButton(
      context,
      '/addons/remove',
      'Remove',
      html`<input type="hidden" name="addon" value="${a.id}">`,
    )}</td></tr>\n`,
)}
</tbody>
</table>`
}
<h2>Create an add-on</h2>
${errorBox(error)}
<form method="post" action="/addons" class="stack">
  ${csrfField(context)}
  <label for="kind">Kind</label>
  <select id="kind" name="kind">${options(
    [
      ['postgresql', 'PostgreSQL'],
      ['redis', 'Redis'],
      ['storage', 'Object storage'],
    ],
    values.kind,
  )}</select>
  <label for="addon-name">Name</label>
  <input id="addon-name" name="name" required value="${values.name ?? ''}">
  <label for="addon-zone">Zone</label>
  <select id="addon-zone" name="zone">${options(ZONES, values.zone)}</select>
  <label for="addon-org">Organization</label>
  <input id="addon-org" name="org" required value="${org ?? ''}"${context.member.kind === 'org' ? html` readonly` : ''}>
  <fieldset>
    <legend>Applications: link on completion</legend>
    ${apps.length === 0 ? html`<p>No application yet.</p>` : apps.map((a) => html`<label class="toggle"><input type="checkbox" name="link" value="${a.id}"> ${a.name} (${a.org})</label>`)}
  </fieldset>
  <button type="submit">Create</button>
</form>`,
    context,
  );
}

/** An add-on and the variables a link gives an application (secret values masked unless revealed). */
export function addonPage(context: PageContext, addon: AddonView, variables: readonly { name: string; value: string; secret: boolean }[], revealed: boolean): Html {
  return layout(
    `Add-on ${addon.name}`,
    html`<h1>Add-on ${addon.name}</h1>
<dl class="facts">
<dt>Kind</dt><dd>${addon.provider}</dd>
<dt>Organization</dt><dd>${addon.org}</dd>
<dt>Zone</dt><dd>${addon.zone}</dd>
<dt>Linked to</dt><dd>${addon.linkedTo.join(', ') || 'no application'}</dd>
</dl>
<table>
<caption>Variables a link injects</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
<tbody>
${variables.map((v) => html`<tr data-variable="${v.name}"><td>${variableName(v.name)}</td><td><code>${v.value}</code></td></tr>\n`)}
</tbody>
</table>
<p>${revealed ? html`<a href="/addons/${addon.id}">Mask secret values</a>` : html`<a href="/addons/${addon.id}?reveal=1">Reveal secret values</a>`}</p>
<p>${actionButton(context, '/addons/remove', 'Remove this add-on', html`<input type="hidden" name="addon" value="${addon.id}">`)}</p>`,
    context,
  );
}
