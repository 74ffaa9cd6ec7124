import type { RunPlan } from 'runplan';

/**
 * The plan in a few lines for the push output: runtimes and processes with where
 * each choice came from, and the health check. The whole explanation is
 * `runplan-host releases --json` (the plan is stored with the release).
 */
export function planSummary(plan: RunPlan): string[] {
  const lines = [`plan: ${plan.app.type} application`];
  for (const r of plan.runtimes) lines.push(`  ${r.name} ${r.version}: ${r.decision.reason} (${r.decision.source})`);
  if (plan.buildInstance) lines.push(`  build: on the dedicated build instance (${plan.buildInstance.decision.resolved}); the processes on ${plan.instance?.decision.resolved ?? 'the instance'}`);
  for (const p of plan.processes) lines.push(`  process ${p.name}: ${p.command.kind === 'exec' ? p.command.argv.join(' ') : p.command.script}`);
  const { paths } = plan.healthCheck;
  lines.push(`  health check: ${paths.length > 0 ? paths.map((p) => `GET ${p.path} (${p.source})`).join(', ') : 'the web port accepts connections'}`);
  const linked = new Map<string, string[]>();
  for (const v of plan.environment.variables) if (v.source === 'addon') linked.set(v.origin, [...(linked.get(v.origin) ?? []), v.name]);
  for (const [origin, names] of linked) lines.push(`  variables of ${origin}: ${names.join(', ')}`);
  // A link's variable hidden by another link is a choice the user did not make: said on every push.
  for (const s of plan.environment.shadowed) if (s.hidden.source === 'addon') lines.push(`  warning: ${s.name} of ${s.hidden.origin} is hidden by ${s.kept.origin}: ${s.reason}`);
  return lines;
}
