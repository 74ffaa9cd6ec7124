import { describeCommand, describeStep } from './describe.js';
import type { BuildStep, Decision, RunPlan } from './schema.js';

/** One difference between two plans. */
export interface PlanChange {
  readonly area: 'app' | 'runtime' | 'decision' | 'step' | 'layer' | 'process' | 'run-hook' | 'health-check' | 'variable' | 'file' | 'warning' | 'release';
  /**
   * What changed: a runtime's or step's name, a decision's id, a variable's name…
   * Area `release` is the one change that groups what the service assigns anew
   * each release (its variables, PORT and what follows the port): `before` and
   * `after` list the variables' values, `subject` what followed.
   */
  readonly subject: string;
  readonly change: 'added' | 'removed' | 'changed';
  /** The old and new values, in words (never a secret: plans hold none). */
  readonly before?: string;
  readonly after?: string;
  /** Why the new plan says what it says: the new decision's source and reason, when there is one. */
  readonly why?: string;
  /** Area `release`: each variable the service assigned anew, its old and new value (absent: it had none). */
  readonly values?: readonly { readonly name: string; readonly before?: string; readonly after?: string }[];
}

type Keyed<T> = ReadonlyMap<string, T>;
const byKey = <T>(items: readonly T[], key: (t: T) => string): Keyed<T> => new Map(items.map((t) => [key(t), t]));

/**
 * Added, removed and changed entries of two keyed lists, in the order of the new list then the old.
 * An entry whose only difference is the port the service assigned this release is not a change of
 * its own: it is named in `followers` (the release line says it followed).
 */
function compare<T>(area: PlanChange['area'], before: Keyed<T>, after: Keyed<T>, show: (t: T) => string, why?: (t: T) => string | undefined, release?: Release): PlanChange[] {
  const out: PlanChange[] = [];
  for (const [key, next] of after) {
    const prev = before.get(key);
    const reason = why?.(next);
    if (prev === undefined) out.push({ area, subject: key, change: 'added', after: show(next), ...(reason ? { why: reason } : {}) });
    else if (show(prev) !== show(next)) {
      if (release?.onlyPortDiffers(show(prev), show(next))) release.followers.push(area === 'health-check' ? key : `${area} ${key}`);
      else out.push({ area, subject: key, change: 'changed', before: show(prev), after: show(next), ...(reason ? { why: reason } : {}) });
    }
  }
  for (const [key, prev] of before) if (!after.has(key)) out.push({ area, subject: key, change: 'removed', before: show(prev) });
  return out;
}

const explain = (d: Decision) => `${d.source}: ${d.reason}`;
const decisionsOf = (plan: RunPlan): Decision[] => [...(plan.instance ? [plan.instance.decision] : []), ...plan.decisions];

/**
 * What changed from `before` to `after` and why: runtimes, decisions, build
 * steps and layers, processes, the health check, the environment's variables,
 * files and warnings. Explanations come from the new plan's decisions.
 */
export function diffPlans(before: RunPlan, after: RunPlan): PlanChange[] {
  const changes: PlanChange[] = [];
  const release = new Release(before, after);
  if (before.app.type !== after.app.type) changes.push({ area: 'app', subject: 'type', change: 'changed', before: before.app.type, after: after.app.type });
  changes.push(
    ...compare(
      'runtime',
      byKey(before.runtimes, (r) => r.name),
      byKey(after.runtimes, (r) => r.name),
      (r) => `${r.version} (${r.distribution})`,
      (r) => explain(r.decision),
    ),
    ...compare(
      'decision',
      // The instance it was sized for is a decision too, kept beside them as data.
      byKey(decisionsOf(before), (d) => d.id),
      byKey(decisionsOf(after), (d) => d.id),
      (d) => d.resolved,
      explain,
    ),
    ...compare(
      'step',
      byKey(before.build.steps, (s) => s.name),
      byKey(after.build.steps, (s) => s.name),
      (s) => `${describeStep(s, { full: true })}${envNames(s.env)}`,
      (s) => s.description,
    ),
    ...compare(
      'layer',
      byKey(before.layers, (l) => l.name),
      byKey(after.layers, (l) => l.name),
      (l) => (l.cacheKey ? `key ${l.cacheKey.slice(0, 12)} (${l.keyInputs.join(', ')})` : 'not cached'),
    ),
    ...compare(
      'process',
      byKey(before.processes, (p) => p.name),
      byKey(after.processes, (p) => p.name),
      (p) => `${describeCommand(p.command, { full: true })}${p.port ? ` on port ${p.port}` : ''}; restart ${p.restart.policy}${envNames(p.env)}`,
      undefined,
      release,
    ),
    ...compare(
      'run-hook',
      byKey(runHookSteps(before), (s) => s.name),
      byKey(runHookSteps(after), (s) => s.name),
      (s) => `${describeStep(s, { full: true })}${envNames(s.env)}`,
      (s) => s.description,
    ),
    ...compare(
      'health-check',
      new Map([['health check', before.healthCheck]]),
      new Map([['health check', after.healthCheck]]),
      (h) =>
        h.kind === 'http' ? `GET ${h.paths.map((p) => p.path).join(', ')} on port ${h.port}, ready within ${h.readyTimeoutMs} ms` : `port ${h.port} accepts connections within ${h.readyTimeoutMs} ms`,
      undefined,
      release,
    ),
    ...compare(
      'variable',
      byKey(
        before.environment.variables.filter((v) => !release.assigns(v.name)),
        (v) => v.name,
      ),
      byKey(
        after.environment.variables.filter((v) => !release.assigns(v.name)),
        (v) => v.name,
      ),
      (v) => `${v.secret ? 'secret' : v.placeholder ? `\${${v.placeholder}}` : JSON.stringify(v.value)} from ${v.source} (${v.origin})`,
    ),
    ...compare(
      'file',
      byKey(before.files, (f) => f.path),
      byKey(after.files, (f) => f.path),
      (f) =>
        `mode ${f.mode.toString(8)}, ${f.phase} phase, ${JSON.stringify(f.content).length} characters of content ${digest(JSON.stringify(f.content))}${f.afterBuild ? `, ${f.afterBuild.action === 'remove' ? 'removed' : 'rewritten'} after the build` : ''}`,
      undefined,
      release.withContents(before.files, after.files),
    ),
    ...compare(
      'warning',
      byKey(before.warnings, (w) => `${w.code}: ${w.message}`),
      byKey(after.warnings, (w) => `${w.code}: ${w.message}`),
      (w) => w.code,
    ),
  );
  // What the user changed first; what the service assigned anew, in one line after.
  const assigned = release.change();
  return assigned ? [...changes, assigned] : changes;
}

/**
 * What the service assigns anew each release (PORT, INSTANCE_ID, COMMIT_ID…:
 * the variables whose source is the service) and what only follows them: the
 * web process's and the health check's port, a file that writes the port. They
 * change on every deployment, so they make one line of the diff instead of one
 * each, which would bury what the user changed.
 */
class Release {
  /** Entries whose only difference is the new port: "process web", "health check", "file …". */
  readonly followers: string[] = [];
  private readonly variables: { name: string; before?: string; after?: string }[] = [];
  private readonly names = new Set<string>();
  private readonly port: { before: number; after: number } | undefined;
  private contents: { before: ReadonlyMap<string, string>; after: ReadonlyMap<string, string> } | undefined;

  constructor(before: RunPlan, after: RunPlan) {
    const service = (plan: RunPlan) =>
      new Map(plan.environment.variables.filter((v) => v.source === 'service').map((v) => [v.name, v.secret ? 'secret' : v.placeholder ? `\${${v.placeholder}}` : (v.value ?? '')]));
    const [old, now] = [service(before), service(after)];
    // PORT first: the others follow the plan's order.
    for (const name of [...new Set(['PORT', ...now.keys(), ...old.keys()])].filter((n) => now.has(n) || old.has(n))) {
      this.names.add(name);
      const [b, a] = [old.get(name), now.get(name)];
      if (b !== a) this.variables.push({ name, ...(b === undefined ? {} : { before: b }), ...(a === undefined ? {} : { after: a }) });
    }
    const ports = [Number(old.get('PORT') ?? before.healthCheck.port), Number(now.get('PORT') ?? after.healthCheck.port)] as const;
    this.port = ports[0] !== ports[1] && ports.every((p) => Number.isInteger(p) && p > 0) ? { before: ports[0], after: ports[1] } : undefined;
  }

  /** Whether the variable is the service's: it is shown in the release line, not on its own. */
  assigns(name: string): boolean {
    return this.names.has(name);
  }

  /** Whether `before` becomes `after` once the old port is read as the new one. */
  onlyPortDiffers(before: string, after: string): boolean {
    if (this.port === undefined) return false;
    const [b, a] = this.contents ? [this.contents.before.get(before), this.contents.after.get(after)] : [before, after];
    if (b === undefined || a === undefined) return false;
    return b.replace(new RegExp(`(?<!\\d)${this.port.before}(?!\\d)`, 'g'), String(this.port.after)) === a;
  }

  /** The same, for files: their contents are compared, though the diff shows only their fingerprints. */
  withContents(before: RunPlan['files'], after: RunPlan['files']): Release {
    const scoped = Object.create(this) as Release;
    const show = (f: RunPlan['files'][number]) =>
      `mode ${f.mode.toString(8)}, ${f.phase} phase, ${JSON.stringify(f.content).length} characters of content ${digest(JSON.stringify(f.content))}${f.afterBuild ? `, ${f.afterBuild.action === 'remove' ? 'removed' : 'rewritten'} after the build` : ''}`;
    scoped.contents = { before: new Map(before.map((f) => [show(f), JSON.stringify(f)])), after: new Map(after.map((f) => [show(f), JSON.stringify(f)])) };
    return scoped;
  }

  /** The one change of the release, or undefined when the service assigned nothing new. */
  change(): PlanChange | undefined {
    if (this.variables.length === 0 && this.followers.length === 0) return undefined;
    const values = (side: 'before' | 'after') => this.variables.map((v) => `${v.name}=${v[side] ?? '(none)'}`).join(', ');
    return {
      area: 'release',
      subject: 'assigned by the service for this release',
      change: 'changed',
      before: values('before'),
      after: values('after'),
      values: this.variables,
      ...(this.followers.length > 0 ? { why: `${this.followers.join(', ')} on the new port` } : {}),
    };
  }
}

/** The plan's run-phase hooks (runHooks), whichever list holds them: their names are distinct. */
function runHookSteps(plan: RunPlan): BuildStep[] {
  const hooks = plan.runHooks;
  return hooks ? [...hooks.preRun, ...hooks.succeeded, ...hooks.failed] : [];
}

function envNames(env: Readonly<Record<string, string>>): string {
  const names = Object.keys(env).sort();
  return names.length > 0 ? `; env ${names.join(', ')}` : '';
}

/** A short, stable fingerprint of text (FNV-1a), to tell that file contents differ without printing them. */
function digest(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** The differences for people, one per line (two with its reason). */
export function formatDiff(changes: readonly PlanChange[]): string {
  if (changes.length === 0) return 'The plans are the same.';
  return changes
    .map((c) => {
      if (c.area === 'release') {
        const values = (c.values ?? []).map((v) => `${v.name} ${v.before ?? '(none)'} → ${v.after ?? '(none)'}`);
        return `${c.subject}: ${[...values, ...(c.why ? [c.why] : [])].join(', ')}`;
      }
      const what = c.change === 'added' ? `added: ${c.after}` : c.change === 'removed' ? `removed (was ${c.before})` : `${c.before} → ${c.after}`;
      return `${c.area} ${c.subject}: ${what}${c.why ? `\n    why: ${c.why}` : ''}`;
    })
    .join('\n');
}
