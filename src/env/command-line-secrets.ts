import { CoreWarnings } from '../errors/core-warnings.js';
import type { Warning } from '../errors/warnings.js';
import { type Assignment, optionSpelling } from './assignments.js';
import { secretReason } from './secrets.js';

/**
 * A warning for each secret variable whose value was written in runplan's own
 * arguments (`--env NPM_TOKEN=…`): any process of the machine, the applications'
 * included, reads a process's arguments in /proc/PID/cmdline while it runs. Names
 * the variable and the option, never the value. `declared`: the names the
 * buildpacks declare secret.
 */
export function secretsOnCommandLine(assignments: readonly Assignment[], declared: ReadonlySet<string>): Warning[] {
  const seen = new Set<string>();
  const warnings: Warning[] = [];
  for (const { name, value, origin } of assignments) {
    if (seen.has(`${origin} ${name}`) || secretReason(name, value, declared) === undefined) continue;
    seen.add(`${origin} ${name}`);
    const option = optionSpelling(origin, name);
    warnings.push(
      CoreWarnings.ENV_SECRET_ON_COMMAND_LINE.create({
        message: `the value of the secret variable ${name} is written in runplan's arguments (${option}=…), which every process of this machine can read in /proc while runplan runs.`,
        variable: name,
        fix: `Give ${option} without "=…" and the value in runplan's own environment (export ${name}), or put ${name} in a file given with ${origin.startsWith('--addon-env') ? '--addon-env-file ADDON=FILE' : '--app-env-file FILE'}.`,
      }),
    );
  }
  return warnings;
}
