import type { RunPlan } from '../plan/schema.js';

export interface PlanHeap {
  readonly megabytes: number;
  /** Where the plan sets it, e.g. "NODE_OPTIONS --max-old-space-size=1536". */
  readonly setting: string;
}

const UNIT_MB: Readonly<Record<string, number>> = { k: 1 / 1024, m: 1, g: 1024 };

/**
 * The largest heap a process of the plan is told to use: Node.js's
 * `--max-old-space-size=<MB>` (in NODE_OPTIONS) and the JVM's `-Xmx<size>`
 * (in Play's command). Buildpacks derive them from the instance the plan was
 * made for; the plan does not record that instance, but an engine that gives
 * the processes less memory than these would see them killed, not slowed.
 */
export function planHeap(plan: RunPlan): PlanHeap | undefined {
  const texts: { where: string; text: string }[] = [];
  for (const v of plan.environment.variables) if (v.value !== undefined) texts.push({ where: v.name, text: v.value });
  for (const p of plan.processes) {
    const words = p.command.kind === 'exec' ? p.command.argv : [p.command.script];
    texts.push(...words.map((text) => ({ where: `the command of ${p.name}`, text })));
    texts.push(...Object.entries(p.env).map(([name, text]) => ({ where: name, text })));
  }
  let largest: PlanHeap | undefined;
  for (const { where, text } of texts) {
    for (const m of text.matchAll(/--max[-_]old[-_]space[-_]size[=\s](\d+)/g)) {
      const mb = Number(m[1]);
      if (!largest || mb > largest.megabytes) largest = { megabytes: mb, setting: `${where} ${m[0]}` };
    }
    for (const m of text.matchAll(/(?:^|\s)-Xmx(\d+)([kKmMgG])?(?=\s|$)/g)) {
      const mb = Math.ceil(Number(m[1]) * (m[2] ? (UNIT_MB[m[2].toLowerCase()] as number) : 1 / 1024 / 1024));
      if (!largest || mb > largest.megabytes) largest = { megabytes: mb, setting: `${where} ${m[0].trim()}` };
    }
  }
  return largest;
}
