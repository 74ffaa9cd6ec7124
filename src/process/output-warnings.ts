import type { Logger } from '../log/logger.js';
import type { OutputWarningRule } from '../plan/schema.js';

const NAMED_AT_MOST = 20;
const MATCHES_TOKEN = '{matches}';

export interface OutputWarning {
  readonly code: string;
  readonly message: string;
  readonly fix: string;
}

/**
 * The warnOn rules of a step, applied to every line it prints: a tool that
 * succeeds may still have skipped what the application needs (npm 12's blocked
 * install scripts, an optional dependency it left out), and says so only in
 * its output. What the lines name is collected, at most NAMED_AT_MOST per rule.
 */
export class OutputWarnings {
  private readonly found: { readonly rule: OutputWarningRule; readonly pattern: RegExp; readonly named: Set<string>; more: number }[];

  constructor(rules: readonly OutputWarningRule[] = []) {
    this.found = rules.map((rule) => ({ rule, pattern: new RegExp(rule.pattern, 'i'), named: new Set<string>(), more: 0 }));
  }

  push(line: string): void {
    for (const entry of this.found) {
      const m = entry.pattern.exec(line);
      if (!m) continue;
      const value = (m[1] ?? m[0]).trim().slice(0, 200);
      if (entry.named.has(value)) continue;
      if (entry.named.size < NAMED_AT_MOST) entry.named.add(value);
      else entry.more += 1;
    }
  }

  warnings(): OutputWarning[] {
    return this.found
      .filter((e) => e.named.size > 0)
      .map(({ rule, named, more }) => {
        const list = `${[...named].join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
        return { code: rule.warning.code, message: rule.warning.message.replace(MATCHES_TOKEN, () => list), fix: rule.warning.fix };
      });
  }

  /** Logs each warning, as the other warnings of a build are logged: the code, what happened, the fix. */
  report(logger: Logger): void {
    reportWarnings(this.warnings(), logger);
  }
}

/** Logs warnings raised by a step: the code, what happened, the fix, and `why` when the step did not run now. */
export function reportWarnings(warnings: readonly OutputWarning[], logger: Logger, why = ''): void {
  for (const w of warnings) logger.warn(`${w.code}: ${w.message} Fix: ${w.fix}${why}`);
}
