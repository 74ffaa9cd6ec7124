import type { Buildpack } from '../../src/kit/index.js';
import { rubyDetector } from './detect.js';
import { RubyErrors, RubyWarnings } from './errors.js';
import { type ResolvedRubyOptions, resolveRubyOptions, type RubyInventoryData, RubyInventorySchema, rubyInventoryProvider, type RubyBuildpackOptions } from './options.js';
import { planRuby } from './plan.js';
import { rubyStackBindings } from './stack.js';

export { RubyErrors, RubyWarnings } from './errors.js';
export { RubyInventorySchema, type RubyBuildpackOptions, type RubyInventoryData } from './options.js';
export { systemRubies, type InstalledRuby, type RubyInventory } from './rubies.js';
export { resolveRubyVersion } from './resolve-ruby-version.js';
export { resolvePumaSizing, PUMA_SIZING_TABLE } from './resolve-puma-sizing.js';
export { renderNginxConfig } from './nginx-config.js';

/**
 * The Ruby on Rails buildpack. Host-level settings (the installed rubies, the
 * default series, where gems come from) are options; the application's settings
 * come from its files and variables only.
 */
export function createRubyBuildpack(options: RubyBuildpackOptions = {}): Buildpack {
  // Resolved when first needed: a bad host setting of the Ruby buildpack must not stop planning a Node.js application.
  let resolved: ResolvedRubyOptions | undefined;
  const settings = () => (resolved ??= resolveRubyOptions(options));
  return {
    id: 'ruby',
    name: 'Ruby on Rails',
    // Above Node.js: Rails applications often carry a package.json for their assets.
    priority: 20,
    detector: rubyDetector,
    planner: { plan: (context) => planRuby(context, settings()) },
    inventory: { schema: RubyInventorySchema, gather: (context) => rubyInventoryProvider(settings()).gather(context) },
    stack: (plan, inventory) => rubyStackBindings(plan, inventory as RubyInventoryData, settings()),
    defaultHealthCheck: { kind: 'port', reason: 'no CC_HEALTH_CHECK_PATH is set: the web port must accept connections (nginx opens it once Puma answers)' },
    errors: RubyErrors,
    warnings: RubyWarnings,
  };
}
