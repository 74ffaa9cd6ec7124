import { describeCommand, describeStep } from './describe.js';
import type { BuildStep, Decision, RunPlan } from './schema.js';

/** One difference between two plans. */
export interface PlanChange {
  readonly area: 'app' | 'runtime' | 'decision' | 'step' | 'layer' | 'process' | 'run-hook' | 'health-check' | 'variable' | 'file' | 'warning';
  /** What changed: a runtime's or step's name, a decision's id, a variable's name… */
  readonly subject: string;
  readonly change: 'added' | 'removed' | 'changed';
  /** The old and new values, in words (never a secret: plans hold none). */
  readonly before?: string;
  readonly after?: string;
  /** Why the new plan says what it says: the new decision's source and reason, when there is one. */
  readonly why?: string;
}

type Keyed<T> = ReadonlyMap<string, T>;
const byKey = <T>(items: readonly T[], key: (t: T) => string): Keyed<T> => new Map(items.map((t) => [key(t), t]));

/** Added, removed and changed entries of two keyed lists, in the order of the new list then the old. */
function compare<T>(area: PlanChange['area'], before: Keyed<T>, after: Keyed<T>, show: (t: T) => string, why?: (t: T) => string | undefined): PlanChange[] {
  const out: PlanChange[] = [];
  for (const [key, next] of after) {
    const prev = before.get(key);
    const reason = why?.(next);
    if (prev === undefined) out.push({ area, subject: key, change: 'added', after: show(next), ...(reason ? { why: reason } : {}) });
    else if (show(prev) !== show(next)) out.push({ area, subject: key, change: 'changed', before: show(prev), after: show(next), ...(reason ? { why: reason } : {}) });
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
    ),
    ...compare(
      'run-hook',
      byKey(runHookSteps(before), (s) => s.name),
      byKey(runHookSteps(after), (s) => s.name),
      (s) => `${describeStep(s, { full: true })}${envNames(s.env)}`,
      (s) => s.description,
    ),
    ...compare('health-check', new Map([['health check', before.healthCheck]]), new Map([['health check', after.healthCheck]]), (h) =>
      h.kind === 'http' ? `GET ${h.paths.map((p) => p.path).join(', ')} on port ${h.port}, ready within ${h.readyTimeoutMs} ms` : `port ${h.port} accepts connections within ${h.readyTimeoutMs} ms`,
    ),
    ...compare(
      'variable',
      byKey(before.environment.variables, (v) => v.name),
      byKey(after.environment.variables, (v) => v.name),
      (v) => `${v.secret ? 'secret' : v.placeholder ? `\${${v.placeholder}}` : JSON.stringify(v.value)} from ${v.source} (${v.origin})`,
    ),
    ...compare(
      'file',
      byKey(before.files, (f) => f.path),
      byKey(after.files, (f) => f.path),
      (f) =>
        `mode ${f.mode.toString(8)}, ${f.phase} phase, ${JSON.stringify(f.content).length} characters of content ${digest(JSON.stringify(f.content))}${f.afterBuild ? `, ${f.afterBuild.action === 'remove' ? 'removed' : 'rewritten'} after the build` : ''}`,
    ),
    ...compare(
      'warning',
      byKey(before.warnings, (w) => `${w.code}: ${w.message}`),
      byKey(after.warnings, (w) => `${w.code}: ${w.message}`),
      (w) => w.code,
    ),
  );
  return changes;
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
      const what = c.change === 'added' ? `added: ${c.after}` : c.change === 'removed' ? `removed (was ${c.before})` : `${c.before} → ${c.after}`;
      return `${c.area} ${c.subject}: ${what}${c.why ? `\n    why: ${c.why}` : ''}`;
    })
    .join('\n');
}
