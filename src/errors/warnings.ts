import { codeOf, type CodeOptions } from './runplan-error.js';

/** The documented part of a warning code. */
export interface WarningDefinition {
  readonly code: string;
  readonly title: string;
  readonly fix: string;
}

/** One warning of a plan (the plan schema's PlanWarning has this shape; declared here so that codes need not know the plan). */
export interface Warning {
  readonly code: string;
  readonly message: string;
  readonly file?: string;
  readonly variable?: string;
  readonly fix?: string;
}

/** A declared warning code (defineWarnings), which creates plan warnings with that code. */
export interface WarningType extends WarningDefinition {
  /** A plan warning with this code; `fix` defaults to the definition's. */
  create(occurrence: { message: string; file?: string; variable?: string; fix?: string }): Warning;
}

/**
 * Declares warning codes the way `defineErrors` declares errors: keys become
 * `RUNPLAN_W_<KEY>` (or `<prefix>_W_<KEY>`). A warning never stops a deployment;
 * it says what the user should change and why.
 */
export function defineWarnings<K extends string>(definitions: Record<K, Omit<WarningDefinition, 'code'>>, options: CodeOptions = {}): Record<K, WarningType> {
  const out = {} as Record<K, WarningType>;
  for (const key of Object.keys(definitions) as K[]) {
    const code = codeOf(key, 'W', options);
    const definition = { code, ...definitions[key] };
    out[key] = {
      ...definition,
      create: ({ message, file, variable, fix }) => ({
        code,
        message,
        ...(file === undefined ? {} : { file }),
        ...(variable === undefined ? {} : { variable }),
        fix: fix ?? definition.fix,
      }),
    };
  }
  return out;
}

/** Lists the definitions of one or more groups of warnings, for documentation and catalogues. */
export function listWarningDefinitions(...groups: Array<Record<string, WarningType>>): WarningDefinition[] {
  return groups.flatMap((g) => Object.values(g).map(({ code, title, fix }) => ({ code, title, fix })));
}
