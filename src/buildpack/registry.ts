import { CoreErrors } from '../errors/core-errors.js';
import { listDefinitions, type ErrorDefinition } from '../errors/runplan-error.js';
import { listWarningDefinitions, type WarningDefinition } from '../errors/warnings.js';
import type { Buildpack } from './contract.js';

/**
 * The buildpacks a host works with. Hosts extend it with their own buildpacks
 * (or replace a built-in one) without forking runplan.
 */
export class BuildpackRegistry {
  private readonly byId = new Map<string, Buildpack>();

  constructor(buildpacks: Iterable<Buildpack> = []) {
    for (const bp of buildpacks) this.register(bp);
  }

  /** Adds a buildpack; an id already registered is an error (use `replace`). */
  register(buildpack: Buildpack): this {
    if (this.byId.has(buildpack.id)) {
      throw CoreErrors.PLAN_DUPLICATE_BUILDPACK.create({ message: `a buildpack with id "${buildpack.id}" is already registered.` });
    }
    this.byId.set(buildpack.id, buildpack);
    return this;
  }

  /** Puts `buildpack` in place of the one with the same id. */
  replace(buildpack: Buildpack): this {
    this.byId.set(buildpack.id, buildpack);
    return this;
  }

  get(id: string): Buildpack | undefined {
    return this.byId.get(id);
  }

  /** Ids in detection order. */
  ids(): string[] {
    return this.list().map((bp) => bp.id);
  }

  /** Buildpacks in detection order: highest priority first, then by id. */
  list(): Buildpack[] {
    return [...this.byId.values()].sort((a, b) => b.priority - a.priority || (a.id < b.id ? -1 : 1));
  }

  /** Every error code the registered buildpacks declare. */
  errorDefinitions(): ErrorDefinition[] {
    return this.list().flatMap((bp) => (bp.errors ? listDefinitions(bp.errors) : []));
  }

  /** Every warning code the registered buildpacks declare. */
  warningDefinitions(): WarningDefinition[] {
    return this.list().flatMap((bp) => (bp.warnings ? listWarningDefinitions(bp.warnings) : []));
  }

  /** Every variable name the registered buildpacks declare secret (Buildpack.secretVariables). */
  secretVariables(): string[] {
    return [...new Set(this.list().flatMap((bp) => bp.secretVariables ?? []))];
  }

  /** A copy to extend without changing this registry. */
  clone(): BuildpackRegistry {
    return new BuildpackRegistry(this.byId.values());
  }
}
