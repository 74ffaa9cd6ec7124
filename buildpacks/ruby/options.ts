import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { z } from 'zod';
import { CoreErrors, type InventoryProvider, quoteExcerpt } from '../../src/kit/index.js';
import type { GemSource } from './resolve-bundle.js';
import { listRubies, systemRubies, type RubyInventory } from './rubies.js';

/** Host-level settings of the Ruby buildpack (never read from the application's environment). */
export interface RubyBuildpackOptions {
  /** The installed interpreters to choose from. Default: those found on this machine (`systemRubies`). */
  readonly rubies?: RubyInventory;
  /** Series used when neither the Gemfile nor CC_RUBY_VERSION asks, e.g. "3.3". Default: $RUNPLAN_RUBY_DEFAULT_SERIES, else "3.3". */
  readonly defaultSeries?: string;
  /** "remote" (bundler fetches missing gems) or "local" (`bundle install --local`). Default: $RUNPLAN_RUBY_GEM_SOURCE, else "remote". */
  readonly gemSource?: GemSource;
  /** A `user` directive for nginx (meaningful only to an nginx master started as root, which runplan's executors never do); default unset. */
  readonly nginxUser?: string | null;
  /** The nginx program. Default: found on PATH or in the sbin directories (not on an ordinary user's PATH on Debian). */
  readonly nginx?: string;
}

export interface ResolvedRubyOptions {
  readonly rubies: RubyInventory;
  readonly defaultSeries: string;
  readonly gemSource: GemSource;
  /** The host's choice; undefined or null: no `user` directive. */
  readonly nginxUser: string | null | undefined;
  readonly nginx: string | undefined;
}

/**
 * The Ruby buildpack's part of the inventory: the interpreters installed (with
 * a fingerprint of their gems), where nginx is, and whether runplan runs as root.
 */
export const RubyInventorySchema = z.object({
  rubies: z.array(z.object({ version: z.string(), bindir: z.string(), origin: z.string(), gemsFingerprint: z.string().optional() })),
  nginx: z.string().describe('The nginx program: an absolute path, or "nginx" when none was found (the build step then says so).'),
  runsAsRoot: z
    .boolean()
    .describe("Recorded for the plan's readers; it no longer changes the plan: as root, runplan runs nginx (master and workers) and every other process as its unprivileged user."),
});
/** The Ruby part of an inventory: the machine's rubies and nginx. */
export type RubyInventoryData = z.infer<typeof RubyInventorySchema>;

/** Gathers the Ruby part of the inventory: asks every interpreter for its version, finds nginx. */
export function rubyInventoryProvider(options: ResolvedRubyOptions): InventoryProvider<RubyInventoryData> {
  return {
    schema: RubyInventorySchema,
    gather: async () => ({
      rubies: (await listRubies(options.rubies)).map((r) => ({ version: r.version, bindir: r.bindir, origin: r.origin, ...(r.gemsFingerprint ? { gemsFingerprint: r.gemsFingerprint } : {}) })),
      nginx: options.nginx ?? findNginx(),
      runsAsRoot: typeof process.getuid === 'function' && process.getuid() === 0,
    }),
  };
}

const SBIN = ['/usr/sbin', '/usr/local/sbin', '/sbin', '/usr/local/nginx/sbin'];

/** The nginx executable on PATH or in the usual sbin directories; "nginx" when none is found (the build step then says so). */
export function findNginx(pathVariable: string = process.env.PATH ?? ''): string {
  for (const dir of [...pathVariable.split(delimiter).filter(Boolean), ...SBIN]) {
    try {
      accessSync(join(dir, 'nginx'), constants.X_OK);
      return join(dir, 'nginx');
    } catch {
      // Not there.
    }
  }
  return 'nginx';
}

/** Fills what the host left out, from runplan's own environment where documented. */
export function resolveRubyOptions(options: RubyBuildpackOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedRubyOptions {
  const defaultSeries = options.defaultSeries ?? (env.RUNPLAN_RUBY_DEFAULT_SERIES || '3.3');
  if (!/^\d+\.\d+$/.test(defaultSeries)) {
    throw CoreErrors.HOST_INVALID_SETTING.create({
      message: `the Ruby default series (${options.defaultSeries === undefined ? 'RUNPLAN_RUBY_DEFAULT_SERIES' : 'the defaultSeries option'}) is ${quoteExcerpt(defaultSeries)}, not a series such as 3.3.`,
      ...(options.defaultSeries === undefined ? { variable: 'RUNPLAN_RUBY_DEFAULT_SERIES' } : {}),
      fix: 'Set RUNPLAN_RUBY_DEFAULT_SERIES (a setting of the host running runplan) to a Ruby series such as 3.3, or unset it.',
    });
  }
  const gemSource = options.gemSource ?? ((env.RUNPLAN_RUBY_GEM_SOURCE || 'remote') as GemSource);
  if (gemSource !== 'remote' && gemSource !== 'local') {
    throw CoreErrors.HOST_INVALID_SETTING.create({
      message: `the Ruby gem source (${options.gemSource === undefined ? 'RUNPLAN_RUBY_GEM_SOURCE' : 'the gemSource option'}) is ${quoteExcerpt(String(gemSource))}, neither remote nor local.`,
      ...(options.gemSource === undefined ? { variable: 'RUNPLAN_RUBY_GEM_SOURCE' } : {}),
      fix: 'Set RUNPLAN_RUBY_GEM_SOURCE (a setting of the host running runplan) to remote or local, or unset it.',
    });
  }
  return {
    rubies: options.rubies ?? systemRubies,
    defaultSeries,
    gemSource,
    nginxUser: options.nginxUser,
    nginx: options.nginx,
  };
}
