import type { Decision, RunPlan } from '../plan/schema.js';
import { describeCommand, describeStep as describe } from '../plan/describe.js';
import { formatSeconds } from '../health/probes.js';

/** The plan for people: every choice with where it came from and why. `source` names what was planned (the plan itself names no path). */
export function formatPlan(plan: RunPlan, source?: string): string {
  const out: string[] = [];
  const { detection } = plan.app;
  out.push(source === undefined ? `Plan (runplan ${plan.runplanVersion})` : `Plan for ${source}`);
  out.push(`  type: ${plan.app.type} (${detection.selectedBy === 'option' ? 'chosen by --type' : 'detected'}: ${detection.evidence.join(', ')})`);
  const others = detection.candidates.filter((c) => c.buildpack !== plan.app.type);
  if (others.length > 0) out.push(`  other buildpacks: ${others.map((c) => `${c.buildpack} ${c.status} (${c.evidence.join(', ')})`).join('; ')}`);

  out.push('', 'Runtimes');
  for (const r of plan.runtimes) {
    out.push(`  ${r.name} ${r.version} (${r.distribution})`);
    out.push(...explain(r.decision, '    '));
  }

  out.push('', 'Decisions');
  for (const d of plan.decisions) {
    out.push(`  ${d.subject}: ${d.resolved}`);
    out.push(...explain(d, '    '));
  }

  out.push('', 'Build steps');
  if (plan.build.steps.length === 0) out.push('  (none)');
  plan.build.steps.forEach((s, i) => {
    const layer = `${s.layer ? ` [fills layer ${s.layer}]` : ''}${s.onlyIfLayerRestored ? ` [only when layer ${s.onlyIfLayerRestored} is restored from the cache]` : ''}`;
    out.push(`  ${i + 1}. ${s.name}: ${describe(s)}${layer}`);
    out.push(`     ${s.description}`);
  });
  for (const l of plan.layers) {
    out.push(`  layer ${l.name} (${l.path}): ${l.cacheKey ? `cached under key ${l.cacheKey.slice(0, 12)} (${l.keyInputs.join(', ')})` : 'not cached'}`);
  }
  const ssh = plan.build.sshKey;
  if (ssh) {
    const sources = [...(ssh.knownHosts.variable ? [ssh.knownHosts.variable] : []), ...(ssh.knownHosts.hostFile ? ["the host's known hosts file"] : [])];
    out.push(
      `  SSH key: ${ssh.variable}=*** (secret), GIT_SSH_COMMAND of the build steps only; host keys ${ssh.hostKeyChecking === 'strict' ? `checked strictly against ${sources.join(' and ')}` : 'trusted on first use'}`,
    );
  }

  out.push('', 'Processes');
  for (const p of plan.processes) {
    const cmd = describeCommand(p.command);
    const env =
      Object.keys(p.env).length > 0
        ? `; env ${Object.entries(p.env)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}`
        : '';
    out.push(`  ${p.name} (${p.role}): ${cmd}${p.port ? ` on port ${p.port}` : ''}; restart ${p.restart.policy}${env}`);
  }

  const hooks = plan.runHooks;
  if (hooks) {
    out.push('', 'Run hooks');
    const show = (when: string, steps: typeof hooks.preRun) => {
      for (const s of steps) out.push(`  ${s.name} (${when}): ${describe(s)}`);
    };
    show('before the processes start; a failure fails the deployment', hooks.preRun);
    show('once the deployment succeeded; a failure is a warning', hooks.succeeded);
    show('once the deployment failed; a failure is a warning', hooks.failed);
  }

  if (plan.files.length > 0) {
    out.push('', 'Files');
    for (const f of plan.files) {
      out.push(`  ${f.path} (mode ${f.mode.toString(8).padStart(4, '0')}, ${f.phase} phase${f.secret ? ', holds a secret' : ''}): ${f.reason}`);
    }
  }

  const hc = plan.healthCheck;
  out.push('', 'Health check');
  if (hc.kind === 'http') {
    out.push(`  GET ${hc.paths.map((p) => `${p.path} (${p.source})`).join(', ')} on port ${hc.port}: ${hc.reason}`);
  } else {
    out.push(`  port ${hc.port} must accept connections within ${formatSeconds(hc.readyTimeoutMs)}: ${hc.reason}`);
  }

  const env = plan.environment;
  out.push('', `Environment (precedence: ${env.precedence.join(' > ')})`);
  for (const v of env.variables) {
    const value = v.secret ? '*** (secret)' : v.placeholder ? `\${${v.placeholder}} (filled by the executor)` : JSON.stringify(v.value);
    out.push(`  ${v.name}=${value}  ← ${v.source}${v.origin !== v.source ? ` (${v.origin})` : ''}`);
  }
  for (const s of env.shadowed) {
    out.push(`  shadowed: ${s.name} from ${s.hidden.origin} is hidden by ${s.kept.origin}: ${s.reason}`);
  }

  if (plan.warnings.length > 0) {
    out.push('', 'Warnings');
    for (const w of plan.warnings) {
      out.push(`  ${w.code}: ${w.message}${w.file ? ` (${w.file})` : ''}${w.variable ? ` (${w.variable})` : ''}`);
      if (w.fix) out.push(`    fix: ${w.fix}`);
    }
  }
  return out.join('\n');
}

function explain(d: Decision, indent: string): string[] {
  const lines = [`${indent}requested: ${d.requested === null ? '(nothing)' : JSON.stringify(d.requested)} from ${d.source}`, `${indent}why: ${d.reason}`];
  for (const o of d.overridden) {
    lines.push(`${indent}overridden: ${o.source}${o.value === null ? '' : ` = ${JSON.stringify(o.value)}`} (${o.reason})`);
  }
  return lines;
}
