import type { AddonProviderKind } from '../store/store.js';

/** The add-on as a provider sees it: its id names what the provider makes (database, role, instance). */
export interface AddonRef {
  readonly id: string;
  readonly name: string;
}

/** An add-on the host already has, as start() is given it: what its server needs to run again. */
export interface ExistingAddon {
  readonly id: string;
  readonly config: Readonly<Record<string, string>>;
}

/** What create() made: the config the store keeps (secrets included) and the variables a link injects. */
export interface CreatedAddon {
  readonly config: Record<string, string>;
  readonly variables: Record<string, string>;
}

/**
 * One kind of add-on, backed by real servers the host starts on loopback, with their data
 * under `<data>/addons/<kind>/`, and stops by PID, leaving nothing running.
 */
export interface AddonProvider {
  readonly kind: AddonProviderKind;
  /** Starts the provider's servers: a shared one (made on first start), or one per existing add-on. */
  start(existing?: readonly ExistingAddon[]): Promise<void>;
  create(addon: AddonRef): Promise<CreatedAddon>;
  /** The variables a link injects, from the config create() returned (no server call). */
  variables(config: Readonly<Record<string, string>>): Record<string, string>;
  /** Removes what create() made, data included. */
  remove(addon: AddonRef, config: Readonly<Record<string, string>>): Promise<void>;
  /** Stops every server process the provider started, and waits for each to exit. */
  stop(): Promise<void>;
  /** Lets go of its servers, which keep serving (serve exits; the next one takes them over). */
  detach(): Promise<void>;
}
