import { basename, dirname } from 'node:path';
import type { RunPlan, StackBindings } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';
import type { ResolvedRubyOptions, RubyInventoryData } from './options.js';

/**
 * Where this host keeps what a Ruby plan names (docs/buildpacks/ruby.md,
 * "Programs"): ${RUBY_BIN}, the bindir of the installed Ruby of the plan's
 * version — a host may have several, and the plan chose one — and ${NGINX_BIN},
 * nginx's directory (an sbin directory, not on an ordinary user's PATH). Read
 * from this host's inventory, so a plan made on a host whose Ruby lives
 * elsewhere runs here with this host's.
 */
export function rubyStackBindings(plan: RunPlan, machine: RubyInventoryData, options: Pick<ResolvedRubyOptions, 'nginx'>): StackBindings {
  const version = plan.runtimes.find((r) => r.name === 'ruby')?.version;
  const ruby = machine.rubies.find((r) => r.version === version);
  if (ruby === undefined) {
    const installed = machine.rubies.map((r) => r.version);
    throw RubyErrors.RUBY_VERSION_UNAVAILABLE.create({
      message: `the plan was made for Ruby ${version ?? '(none named)'}, which this host does not have (${installed.length > 0 ? `installed: ${installed.join(', ')}` : 'no Ruby installed'}).`,
      fix: "Install the plan's Ruby on this host (runplan finds every ruby on PATH and under /opt/rubies), or plan the application again on this host, which chooses among its rubies.",
      details: { requested: version ?? null, available: installed },
    });
  }
  const nginx = options.nginx ?? machine.nginx;
  if (!nginx.startsWith('/') || basename(nginx) !== 'nginx') {
    throw RubyErrors.RUBY_NGINX_MISSING.create({
      message: nginx.startsWith('/')
        ? `the nginx program given to the Ruby buildpack, ${nginx}, is not named nginx: the plan runs nginx by name from its directory.`
        : 'nginx is not installed on this host: it is not on PATH nor in /usr/sbin, /usr/local/sbin, /sbin or /usr/local/nginx/sbin.',
    });
  }
  return { RUBY_BIN: ruby.bindir, NGINX_BIN: dirname(nginx) };
}
