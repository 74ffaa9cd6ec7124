import { z } from 'zod';
import type { InventoryProvider } from '../../src/kit/index.js';
import { probeJava, probePython } from './host-programs.js';
import { DEFAULT_JVM_SIZING, type JvmSizing } from './jvm-memory.js';
import { checksum, parseChecksums, type MirrorSetting } from './mirror.js';

/**
 * Host-level settings of the Play 1.x buildpack. Each may also come from the
 * environment of the runplan process (never from the application's): the
 * option wins over the variable.
 */
export interface Play1Options {
  /** URL template of the distributions, with {version} (e.g. 1.11.0) and optionally {series} (1.11). Env RUNPLAN_PLAY1_MIRROR. */
  readonly mirror?: string;
  /** SHA-256 of each release's archive. Env RUNPLAN_PLAY1_CHECKSUMS ("1.11.0=<sha256>,…"); options entries win. */
  readonly checksums?: Readonly<Record<string, string>>;
  /** Series used when the application asks for none (an accepted value, e.g. "1.5"). Env RUNPLAN_PLAY1_DEFAULT_VERSION. */
  readonly defaultVersion?: string;
  /** How the JVM heap is derived from the instance size. */
  readonly jvm?: Partial<JvmSizing>;
  /** The runplan process's environment to read host defaults from (default process.env). */
  readonly hostEnv?: Readonly<Record<string, string | undefined>>;
}

/** The variables of runplan's own environment that give a host's Play 1.x settings (mirror, checksums, default version), under the options' names. */
export const HOST_VARIABLES = {
  mirror: 'RUNPLAN_PLAY1_MIRROR',
  checksums: 'RUNPLAN_PLAY1_CHECKSUMS',
  defaultVersion: 'RUNPLAN_PLAY1_DEFAULT_VERSION',
} as const;

/** The settings in effect; validated when a Play application is planned, not before. */
export interface HostConfiguration {
  readonly mirror: MirrorSetting | undefined;
  /** Parsed on demand, so that a malformed table only fails Play plans. */
  checksums(): ReadonlyMap<string, string>;
  readonly checksumsOrigin: string;
  readonly defaultVersion: { readonly value: string; readonly origin: string } | undefined;
  readonly jvm: JvmSizing;
}

/**
 * The Play 1.x buildpack's part of the inventory: where releases are downloaded
 * from and what they hash to (the host's mirror and checksum table), and the
 * Java and Python this machine has for the launcher.
 */
export const Play1InventorySchema = z.object({
  mirror: z.object({ template: z.string(), origin: z.string() }).nullable().describe('The URL template of the distributions, or null when none is configured.'),
  checksums: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)).describe("SHA-256 of each release's archive."),
  checksumsOrigin: z.string(),
  java: z.object({ major: z.number().int().nullable(), banner: z.string() }).nullable().describe('`java -version` of the java on PATH, or null when there is none.'),
  python: z.object({ python2: z.string().nullable(), python3: z.string().nullable() }).describe("The versions of python2 and python3 on PATH (Play's launcher is a Python script)."),
});
/** The Play 1.x part of an inventory: the mirror settings, java and python. */
export type Play1InventoryData = z.infer<typeof Play1InventorySchema>;

/** Gathers the Play 1.x part of the inventory: the host's mirror settings, and asks java and python for their versions. */
export function play1InventoryProvider(config: HostConfiguration): InventoryProvider<Play1InventoryData> {
  return {
    schema: Play1InventorySchema,
    gather: async () => ({
      mirror: config.mirror ? { template: config.mirror.template, origin: config.mirror.origin } : null,
      checksums: Object.fromEntries([...config.checksums()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      checksumsOrigin: config.checksumsOrigin,
      java: await probeJava(),
      python: { python2: await probePython('python2'), python3: await probePython('python3') },
    }),
  };
}

export function hostConfiguration(options: Play1Options = {}): HostConfiguration {
  const env = options.hostEnv ?? process.env;
  const mirror = pick(options.mirror, 'mirror', env, HOST_VARIABLES.mirror);
  const envTable = env[HOST_VARIABLES.checksums];
  const optionTable = options.checksums;
  return {
    mirror: mirror && { template: mirror.value, origin: mirror.origin },
    checksums() {
      const table = new Map(envTable ? parseChecksums(envTable, HOST_VARIABLES.checksums) : []);
      for (const [version, sha] of Object.entries(optionTable ?? {})) table.set(version, checksum(sha, 'option checksums', version));
      return table;
    },
    checksumsOrigin: [envTable ? HOST_VARIABLES.checksums : undefined, optionTable ? 'option checksums' : undefined].filter(Boolean).join(' and ') || 'no checksum table',
    defaultVersion: pick(options.defaultVersion, 'defaultVersion', env, HOST_VARIABLES.defaultVersion),
    jvm: { ...DEFAULT_JVM_SIZING, ...options.jvm },
  };
}

/** An option wins over the host variable; a blank variable counts as unset. */
function pick(option: string | undefined, optionName: string, env: Readonly<Record<string, string | undefined>>, variable: string) {
  if (option !== undefined) return { value: option, origin: `option ${optionName}` };
  const value = env[variable]?.trim();
  return value ? { value, origin: variable } : undefined;
}
