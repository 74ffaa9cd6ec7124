import { type SshGitDependency, sshRemote } from '../../src/kit/index.js';
import { PACKAGE_JSON, type PackageJson } from './package-json.js';

/** More are told apart by the generic rule only: a plan stays small whatever package.json holds. */
const MAX_NAMED_SSH_DEPENDENCIES = 20;

/**
 * The dependencies of package.json that npm, Yarn and pnpm fetch with git over
 * SSH: `git+ssh://…`, `ssh://…` and scp-like `git@host:path` specs (the core
 * explains CC_SSH_PRIVATE_KEY with them and names the one a server refuses).
 * devDependencies count only when they are installed.
 */
export function sshGitDependencies(pkg: PackageJson, installDev: boolean): SshGitDependency[] {
  const fields = ['dependencies', 'optionalDependencies', ...(installDev ? ['devDependencies'] : [])];
  const out: SshGitDependency[] = [];
  for (const field of fields) {
    const deps = pkg[field];
    if (deps === null || typeof deps !== 'object' || Array.isArray(deps)) continue;
    for (const [name, spec] of Object.entries(deps as Record<string, unknown>)) {
      if (out.length >= MAX_NAMED_SSH_DEPENDENCIES) return out;
      // `name@git+ssh://…` aliases (npm:) are not git specs; a spec of another type is package.json's own problem.
      if (typeof spec !== 'string' || !/^(git\+ssh:|ssh:|[A-Za-z0-9._-]+@[^:/\s]+:)/.test(spec.trim())) continue;
      if (sshRemote(spec) !== undefined && !out.some((d) => d.name === name)) out.push({ name, url: spec.trim(), file: PACKAGE_JSON });
    }
  }
  return out;
}
