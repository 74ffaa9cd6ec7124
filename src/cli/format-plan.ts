import type { BuildStep, Command, Decision, RunPlan } from '../plan/schema.js';
import { describeCommand, describeStep } from '../plan/describe.js';
import { lineExcerpt, quoteExcerpt } from '../errors/excerpt.js';
import { formatSeconds } from '../health/probes.js';

/**
 * How much of one value of a plan the printed plan shows. A plan read back
 * (`--plan`) may come from anywhere: each of its texts is shown on its one line
 * (line breaks and controls escaped, so that none forges a line of runplan's
 * output) and cut after this many characters.
 */
const SHOWN_MAX_CHARS = 2_000;
const t = (text: string) => lineExcerpt(text, SHOWN_MAX_CHARS);
const q = (text: string) => quoteExcerpt(text, SHOWN_MAX_CHARS);
// The plan shows a step's purpose on a line of its own: its command line shows the command.
const describe = (step: BuildStep) => t(describeStep(step, { inlineScripts: 'first-line' }));
const command = (c: Command) => t(describeCommand(c));

/** The plan for people: every choice with where it came from and why. `source` names what was planned (the plan itself names no path). */
export function formatPlan(plan: RunPlan, source?: string): string {
  const out: string[] = [];
  const { detection } = plan.app;
  out.push(source === undefined ? `Plan (runplan ${t(plan.runplanVersion)})` : `Plan for ${t(source)}`);
  out.push(`  type: ${t(plan.app.type)} (${detection.selectedBy === 'option' ? 'chosen by --type' : 'detected'}: ${t(detection.evidence.join(', '))})`);
  const others = detection.candidates.filter((c) => c.buildpack !== plan.app.type);
  if (others.length > 0) out.push(`  other buildpacks: ${t(others.map((c) => `${c.buildpack} ${c.status} (${c.evidence.join(', ')})`).join('; '))}`);

  out.push('', 'Runtimes');
  for (const r of plan.runtimes) {
    out.push(`  ${t(r.name)} ${t(r.version)} (${t(r.distribution)})`);
    out.push(...explain(r.decision, '    '));
  }

  if (plan.instance) {
    out.push('', 'Instance (the plan is sized for it)');
    out.push(`  ${t(plan.instance.decision.resolved)}`);
    out.push(...explain(plan.instance.decision, '    '));
  }
  if (plan.buildInstance) {
    out.push('', 'Build instance (the build is sized for it)');
    out.push(`  ${t(plan.buildInstance.decision.resolved)}`);
    out.push(...explain(plan.buildInstance.decision, '    '));
  }

  out.push('', 'Decisions');
  for (const d of plan.decisions) {
    out.push(`  ${t(d.subject)}: ${t(d.resolved)}`);
    out.push(...explain(d, '    '));
  }

  out.push('', 'Build steps');
  if (plan.build.steps.length === 0) out.push('  (none)');
  plan.build.steps.forEach((s, i) => {
    const layer = `${s.layer ? ` [fills layer ${t(s.layer)}]` : ''}${s.onlyIfLayerRestored ? ` [only when layer ${t(s.onlyIfLayerRestored)} is restored from the cache]` : ''}${s.verifiesLayer ? ` [checks layer ${t(s.verifiesLayer)}; skipped when it is restored from the cache]` : ''}`;
    out.push(`  ${i + 1}. ${t(s.name)}: ${describe(s)}${layer}`);
    out.push(`     ${t(s.description)}`);
  });
  for (const l of plan.layers) {
    out.push(`  layer ${t(l.name)} (${t(l.path)}): ${l.cacheKey ? `cached under key ${t(l.cacheKey.slice(0, 12))} (${t(l.keyInputs.join(', '))})` : 'not cached'}`);
  }
  const ssh = plan.build.sshKey;
  if (ssh) {
    const sources = [...(ssh.knownHosts.variable ? [t(ssh.knownHosts.variable)] : []), ...(ssh.knownHosts.hostFile ? ["the host's known hosts file"] : [])];
    out.push(
      `  SSH key: ${t(ssh.variable)}=*** (secret), GIT_SSH_COMMAND of the build steps only; host keys ${ssh.hostKeyChecking === 'strict' ? `checked strictly against ${sources.join(' and ')}` : 'trusted on first use'}`,
    );
  }

  out.push('', 'Processes');
  for (const p of plan.processes) {
    const cmd = command(p.command);
    const env =
      Object.keys(p.env).length > 0
        ? `; env ${Object.entries(p.env)
            .map(([k, v]) => `${t(k)}=${t(v)}`)
            .join(' ')}`
        : '';
    out.push(`  ${t(p.name)} (${p.role}): ${cmd}${p.port ? ` on port ${p.port}` : ''}; restart ${p.restart.policy}${env}`);
  }

  const hooks = plan.runHooks;
  if (hooks) {
    out.push('', 'Run hooks');
    const show = (when: string, steps: typeof hooks.preRun) => {
      for (const s of steps) out.push(`  ${t(s.name)} (${when}): ${describe(s)}`);
    };
    show('before the processes start; a failure fails the deployment', hooks.preRun);
    show('once the deployment succeeded; a failure is a warning', hooks.succeeded);
    show('once the deployment failed; a failure is a warning', hooks.failed);
  }

  if (plan.files.length > 0) {
    out.push('', 'Files');
    for (const f of plan.files) {
      out.push(`  ${t(f.path)} (mode ${f.mode.toString(8).padStart(4, '0')}, ${f.phase} phase${f.secret ? ', holds a secret' : ''}): ${t(f.reason)}`);
      if (f.afterBuild) out.push(`    after the build: ${f.afterBuild.action === 'remove' ? 'removed' : 'rewritten'}: ${t(f.afterBuild.reason)}`);
    }
  }

  const hc = plan.healthCheck;
  out.push('', 'Health check');
  if (hc.kind === 'http') {
    out.push(`  GET ${t(hc.paths.map((p) => `${p.path} (${p.source})`).join(', '))} on port ${hc.port}: ${t(hc.reason)}`);
  } else {
    out.push(`  port ${hc.port} must accept connections within ${formatSeconds(hc.readyTimeoutMs)}: ${t(hc.reason)}`);
  }

  const env = plan.environment;
  out.push('', `Environment (precedence: ${env.precedence.join(' > ')})`);
  for (const v of env.variables) {
    const value = v.secret ? '*** (secret)' : v.placeholder ? `\${${v.placeholder}} (filled by the executor)` : v.value === undefined ? 'undefined' : q(v.value);
    out.push(`  ${t(v.name)}=${value}  ← ${v.source}${v.origin !== v.source ? ` (${t(v.origin)})` : ''}`);
  }
  for (const s of env.shadowed) {
    out.push(`  shadowed: ${t(s.name)} from ${t(s.hidden.origin)} is hidden by ${t(s.kept.origin)}: ${t(s.reason)}`);
  }

  if (plan.warnings.length > 0) {
    out.push('', 'Warnings');
    for (const w of plan.warnings) {
      out.push(`  ${t(w.code)}: ${t(w.message)}${w.file ? ` (${t(w.file)})` : ''}${w.variable ? ` (${t(w.variable)})` : ''}`);
      if (w.fix) out.push(`    fix: ${t(w.fix)}`);
    }
  }
  return out.join('\n');
}

function explain(d: Decision, indent: string): string[] {
  const lines = [`${indent}requested: ${d.requested === null ? '(nothing)' : q(d.requested)} from ${t(d.source)}`, `${indent}why: ${t(d.reason)}`];
  for (const o of d.overridden) {
    lines.push(`${indent}overridden: ${t(o.source)}${o.value === null ? '' : ` = ${q(o.value)}`} (${t(o.reason)})`);
  }
  return lines;
}
