import { defaultRegistry } from '../compose/default-registry.js';
import type { EnvironmentInput } from '../env/assemble.js';
import { redactError } from '../env/redact-error.js';
import { Redactor } from '../env/secrets.js';

/**
 * The secret values a command was given, for the errors the CLI reports
 * (reportError): the variables of --env, --app-env-file, --addon-env and
 * --addon-env-file that are secret as the deployment's environment makes them
 * (runplan's rules, the names the built-in buildpacks, those of --buildpack and
 * the saved plan declare). The library redacts its own errors with the
 * deployment's environment; this also covers what fails around it (a
 * --buildpack module that cannot be loaded, an error thrown before the
 * environment was assembled).
 */
export class CliSecrets {
  private readonly inputs: EnvironmentInput[] = [];
  private readonly declared = new Set<string>();

  /** The environment given to the command. */
  given(env: EnvironmentInput): void {
    this.inputs.push(env);
  }

  /** Names declared secret besides runplan's own and the built-in buildpacks' (a --buildpack's, a saved plan's). */
  declare(names: Iterable<string>): void {
    for (const name of names) this.declared.add(name);
  }

  /** A redactor of every secret value given so far; an empty one before the arguments were read. */
  redactor(): Redactor {
    if (this.inputs.length === 0) return new Redactor();
    const redactor = new Redactor(new Set([...defaultRegistry().secretVariables(), ...this.declared, ...this.inputs.flatMap((i) => i.secretNames ?? [])]));
    for (const input of this.inputs) {
      for (const link of input.links ?? []) for (const [name, value] of Object.entries(link.variables)) redactor.addVariable(name, value);
      const application: readonly { name: string; value: string }[] = Array.isArray(input.application)
        ? input.application
        : Object.entries(input.application ?? {}).map(([name, value]) => ({ name, value }));
      for (const { name, value } of application) redactor.addVariable(name, value);
      for (const [name, value] of Object.entries(input.service ?? {})) redactor.addVariable(name, value);
    }
    return redactor;
  }

  /** `error` with every secret value given replaced by `***`: message, fix, details, stack and causes. */
  redact(error: unknown): unknown {
    return redactError(error, this.redactor());
  }
}
