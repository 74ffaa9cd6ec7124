import { CoreErrors } from '../errors/core-errors.js';
import { fillPlaceholders, type Bindings } from '../plan/placeholders.js';
import { PLACEHOLDERS, placeholder, type EnvSource, type PlanEnvironment, type PlanVariable, type Placeholder, type ShadowedVariable } from '../plan/schema.js';
import { assertValidVariableName } from './names.js';
import type { Assignment } from './assignments.js';
import { Redactor } from './secrets.js';

/**
 * The run environment is made of three sets (specification, "Environment"):
 * the application's variables, those of linked add-ons and linked applications,
 * and those the service defines. Buildpacks may add defaults that apply only
 * when no set defines the name (e.g. WEB_CONCURRENCY).
 *
 * Precedence, strongest first:
 *   1. service       — PORT, INSTANCE_NUMBER… describe the instance; an app cannot move its own port.
 *   2. application   — what the user set explicitly wins over what a link injected.
 *   3. addon         — linked add-ons and applications, in link order; a later link wins over an earlier one.
 *   4. buildpack-default — filled only when absent.
 */
export const ENV_PRECEDENCE: readonly EnvSource[] = ['service', 'application', 'addon', 'buildpack-default'];

/**
 * Variables runplan consumes itself and passes on to nothing: no build step, hook
 * or process gets them as a variable, and the plan's environment does not list
 * them (the plan names them where they are used). CC_SSH_PRIVATE_KEY reaches the
 * build steps only as a file that GIT_SSH_COMMAND names (docs/service.md,
 * "Private SSH key").
 */
const WITHHELD_VARIABLES: ReadonlySet<string> = new Set(['CC_SSH_PRIVATE_KEY']);

/** The variables one linked add-on or application injects, weaker than the application's own. */
export interface LinkedVariables {
  /** Add-on or linked application name, e.g. "redis-main". */
  readonly name: string;
  readonly kind?: 'addon' | 'application';
  readonly variables: Readonly<Record<string, string>>;
}

/** The deployment environment's sources, from weakest to strongest: links, the application's variables, the service's. */
export interface EnvironmentInput {
  /** A name → value map, or assignments that remember where each was read (file and line, option). */
  readonly application?: Readonly<Record<string, string>> | readonly Assignment[];
  readonly links?: readonly LinkedVariables[];
  readonly service?: Readonly<Record<string, string>>;
  /** Names the buildpacks declare secret (BuildpackRegistry.secretVariables()), besides runplan's own: their values are never shown. */
  readonly secretNames?: readonly string[];
}

/** One variable of the deployment environment: its value, where it came from, and whether it is a secret. */
export interface EnvEntry {
  readonly name: string;
  readonly value: string;
  readonly source: EnvSource;
  readonly origin: string;
  readonly secret: boolean;
}

/**
 * The assembled environment. Values (secrets included) stay in memory for
 * execution; `toPlan()` gives the serialisable view without secret values.
 */
export class Environment {
  private readonly entries = new Map<string, EnvEntry>();
  private readonly withheldEntries = new Map<string, EnvEntry>();
  private readonly shadowedList: ShadowedVariable[] = [];
  readonly redactor: Redactor;

  constructor(secretNames: Iterable<string> = []) {
    this.redactor = new Redactor(new Set(secretNames));
  }

  private mapOf(name: string): Map<string, EnvEntry> {
    return WITHHELD_VARIABLES.has(name) ? this.withheldEntries : this.entries;
  }

  /** Adds a variable at `source`; records whichever definition loses. */
  put(name: string, value: string, source: EnvSource, origin: string): void {
    assertNoNul(name, value, origin);
    const secret = this.redactor.addVariable(name, value);
    const incoming: EnvEntry = { name, value, source, origin, secret };
    const entries = this.mapOf(name);
    const existing = entries.get(name);
    if (existing === undefined) {
      entries.set(name, incoming);
      return;
    }
    const rank = (s: EnvSource) => ENV_PRECEDENCE.indexOf(s);
    // Equal rank: the later definition wins (link order; later lines of a file).
    const incomingWins = rank(incoming.source) <= rank(existing.source);
    const [kept, hidden] = incomingWins ? [incoming, existing] : [existing, incoming];
    entries.set(name, kept);
    if (kept.source === 'buildpack-default' || hidden.source === 'buildpack-default') return;
    if (kept.source === hidden.source && kept.origin === hidden.origin) return;
    this.shadowedList.push({
      name,
      kept: { source: kept.source, origin: kept.origin },
      hidden: { source: hidden.source, origin: hidden.origin },
      reason:
        kept.source === hidden.source ? `both come from ${kept.source} variables; the later one (${kept.origin}) wins` : `${kept.source} variables take precedence over ${hidden.source} variables`,
    });
  }

  /** Adds a buildpack default unless some source already defines the name. Returns whether it was added. */
  putDefault(name: string, value: string, origin: string): boolean {
    if (this.entries.has(name) || WITHHELD_VARIABLES.has(name)) return false;
    this.put(name, value, 'buildpack-default', origin);
    return true;
  }

  get(name: string): string | undefined {
    return this.entries.get(name)?.value;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  entry(name: string): EnvEntry | undefined {
    return this.entries.get(name);
  }

  /** A withheld variable (WITHHELD_VARIABLES): for the executor that consumes it, never for a process. */
  withheld(name: string): EnvEntry | undefined {
    return this.withheldEntries.get(name);
  }

  /** Every withheld variable that was given. */
  withheldList(): EnvEntry[] {
    return [...this.withheldEntries.values()];
  }

  /** Every variable, sorted by name. */
  list(): EnvEntry[] {
    return [...this.entries.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Plain name → value map, for spawning processes. */
  toRecord(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const e of this.entries.values()) out[e.name] = e.value;
    return out;
  }

  get shadowed(): readonly ShadowedVariable[] {
    return this.shadowedList;
  }

  toPlan(): PlanEnvironment {
    const variables: PlanVariable[] = this.list().map((e) => {
      const filledBy = PLACEHOLDERS.find((p) => e.value === placeholder(p));
      return {
        name: e.name,
        source: e.source,
        origin: e.origin,
        secret: e.secret,
        ...(e.secret || filledBy ? {} : { value: e.value }),
        ...(filledBy ? { placeholder: filledBy } : {}),
      };
    });
    return { precedence: [...ENV_PRECEDENCE], variables, shadowed: [...this.shadowedList] };
  }

  /** The environment an executor gives steps and processes: values that are a placeholder (APP_HOME) filled in. */
  bound(bindings: Bindings): Environment {
    const copy = new Environment(this.redactor.declared);
    for (const e of this.entries.values()) {
      const value = PLACEHOLDERS.some((p) => e.value === placeholder(p)) ? fillPlaceholders(e.value, bindings) : e.value;
      copy.entries.set(e.name, { ...e, value });
      if (e.secret) copy.redactor.addVariable(e.name, e.value);
    }
    for (const e of this.withheldEntries.values()) {
      copy.withheldEntries.set(e.name, e);
      copy.redactor.addVariable(e.name, e.value);
    }
    copy.shadowedList.push(...this.shadowedList);
    return copy;
  }

  /**
   * The environment of a saved plan: its variables as the plan lists them, secret
   * values from `secrets` (plans never hold them). A secret without a value is
   * RUNPLAN_E_PLAN_SECRET_MISSING. `withheld` are the withheld variables given
   * with it (the plan names them elsewhere, e.g. build.sshKey).
   */
  static fromPlan(plan: PlanEnvironment, secrets: Readonly<Record<string, string>>, withheld: readonly EnvEntry[] = []): Environment {
    // Secret in the plan is secret here, whichever buildpack declared it so (a name no rule of runplan's knows): its value is redacted.
    const env = new Environment(plan.variables.filter((v) => v.secret).map((v) => v.name));
    for (const e of withheld) env.put(e.name, e.value, e.source, e.origin);
    for (const v of plan.variables) {
      const value = v.placeholder ? placeholder(v.placeholder as Placeholder) : v.secret ? secrets[v.name] : v.value;
      if (value === undefined) {
        throw CoreErrors.PLAN_SECRET_MISSING.create({ message: `the plan needs the value of ${v.name} (${v.source} variable from ${v.origin}), which plans never hold.`, variable: v.name });
      }
      env.entries.set(v.name, { name: v.name, value, source: v.source, origin: v.origin, secret: v.secret });
      if (v.secret) env.redactor.addVariable(v.name, value);
    }
    env.shadowedList.push(...plan.shadowed);
    return env;
  }
}

/**
 * A NUL byte ends a C string: no process can be given the value, and Node's refusal
 * would quote it (escaped, past the redactor). Refused here, naming where it came from.
 */
function assertNoNul(name: string, value: string, origin: string): void {
  if (!value.includes('\0')) return;
  throw CoreErrors.ENV_VALUE_INVALID.create({ message: `the value of ${name} (from ${origin}) contains a NUL byte, which no process environment can hold; the value is not shown.`, variable: name });
}

/** Builds the environment from the three sets, validating every name. */
export function assembleEnvironment(input: EnvironmentInput): Environment {
  const env = new Environment(input.secretNames);
  // Weakest first, so that `put` records what each stronger set shadows.
  for (const link of input.links ?? []) {
    const origin = `${link.kind ?? 'addon'} ${link.name}`;
    for (const [name, value] of Object.entries(link.variables)) {
      assertValidVariableName(name, origin);
      env.put(name, value, 'addon', origin);
    }
  }
  const application: readonly Assignment[] = Array.isArray(input.application)
    ? input.application
    : Object.entries(input.application ?? {}).map(([name, value]) => ({ name, value, origin: 'application variables' }));
  for (const { name, value, origin } of application) {
    assertValidVariableName(name, origin);
    env.put(name, value, 'application', origin);
  }
  addServiceVariables(env, input.service ?? {});
  return env;
}

/** Puts the service's variables, the strongest set, on an environment assembled from the others. */
export function addServiceVariables(env: Environment, service: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(service)) {
    assertValidVariableName(name, 'service');
    env.put(name, value, 'service', 'service');
  }
}
