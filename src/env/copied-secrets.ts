import { CoreErrors } from '../errors/core-errors.js';
import type { EnvEntry } from './assemble.js';

/** Shorter secret values occur in other values by coincidence ("prod"); a longer one there was copied. */
export const MIN_COPIED_SECRET_LENGTH = 8;

/** Variables the service runs as shell commands: a secret is referenced there as $NAME. */
const COMMAND_VARIABLE = /^CC_(?:RUN_COMMAND|WORKER_COMMAND(?:_\d+)?|[A-Z_]+_HOOK|CUSTOM_BUILD_TOOL)$/;

/**
 * Refuses a variable that is not secret (its value is shown in the plan, the output
 * and the logs) holding the value of one that is, e.g. `CC_RUN_COMMAND=node server.js
 * --token <the value of NPM_TOKEN>`: names both variables, never the value, and says
 * how to reference the secret instead. `secrets` includes withheld variables.
 */
export function assertNoSecretCopied(plain: readonly EnvEntry[], secrets: readonly EnvEntry[]): void {
  const long = secrets.filter((s) => s.value.length >= MIN_COPIED_SECRET_LENGTH);
  for (const entry of plain) {
    const copied = long.find((s) => entry.value.includes(s.value));
    if (copied === undefined) continue;
    const command = COMMAND_VARIABLE.test(entry.name);
    throw CoreErrors.ENV_SECRET_COPIED.create({
      message: `${entry.name} (${entry.source} variable from ${entry.origin}) contains the value of the secret variable ${copied.name}; ${entry.name} is not a secret, and its value is written in the plan, the output and the logs.`,
      variable: entry.name,
      fix: command
        ? `Write $${copied.name} in ${entry.name} where the value is (e.g. --token "$${copied.name}"): the shell expands it from the environment when the command runs, and the plan holds only the name.`
        : `Remove the value from ${entry.name} and have the application read ${copied.name}; if ${entry.name} is a credential too, give it a name runplan takes for a secret (…_TOKEN, …_SECRET, …_PASSWORD).`,
    });
  }
}
