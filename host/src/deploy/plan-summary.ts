import type { RunPlan } from 'runplan';

/**
 * The plan in a few lines for the push output: runtimes and processes with where
 * each choice came from, and the health check. The whole explanation is
 * `runplan-host releases --json` (the plan is stored with the release).
 */
export function planSummary(plan: RunPlan): string[] {
  const lines = [`plan: ${plan.app.type} application`];
  for (const r of plan.runtimes) lines.push(`  ${r.name} ${r.version}: ${r.decision.reason} (${r.decision.source})`);
  for (const p of plan.processes) lines.push(`  process ${p.name}: ${p.command.kind === 'exec' ? p.command.argv.join(' ') : p.command.script}`);
  const { paths } = plan.healthCheck;
  lines.push(`  health check: ${paths.length > 0 ? paths.map((p) => `GET ${p.path} (${p.source})`).join(', ') : 'the web port accepts connections'}`);
  return lines;
}
