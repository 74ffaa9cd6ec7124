import { decide, type Decision, type OverriddenSource } from '../../src/kit/index.js';
import { NodeErrors } from './errors.js';

export interface DevDependenciesInput {
  readonly ccNodeDevDependencies?: string | undefined;
  readonly nodeEnv?: string | undefined;
}

/**
 * Whether devDependencies are installed (specification, Node rule 8; NOTES table):
 * CC_NODE_DEV_DEPENDENCIES=install|ignore decides whatever NODE_ENV says; without
 * it, the package managers' default: skipped with NODE_ENV=production, installed
 * otherwise. The install command then says so explicitly for every tool, since
 * Yarn berry, pnpm and bun do not all follow NODE_ENV on their own.
 */
export function resolveDevDependencies(input: DevDependenciesInput): { install: boolean; decision: Decision } {
  const value = input.ccNodeDevDependencies?.trim();
  const production = input.nodeEnv === 'production';
  const overridden: OverriddenSource[] = [];
  if (value !== undefined && value !== '') {
    if (value !== 'install' && value !== 'ignore') {
      throw NodeErrors.NODE_DEV_DEPENDENCIES_INVALID.create({
        message: `CC_NODE_DEV_DEPENDENCIES is ${JSON.stringify(value)}; it must be install or ignore.`,
        variable: 'CC_NODE_DEV_DEPENDENCIES',
      });
    }
    if (input.nodeEnv !== undefined) {
      overridden.push({ source: 'env NODE_ENV', value: input.nodeEnv, reason: 'CC_NODE_DEV_DEPENDENCIES overrides the default NODE_ENV would give' });
    }
    const install = value === 'install';
    return {
      install,
      decision: decision(value, 'env CC_NODE_DEV_DEPENDENCIES', install, `CC_NODE_DEV_DEPENDENCIES=${value} ${install ? 'installs' : 'skips'} them whatever NODE_ENV is (rule 8)`, overridden),
    };
  }
  return production
    ? { install: false, decision: decision(null, 'env NODE_ENV', false, "NODE_ENV=production and CC_NODE_DEV_DEPENDENCIES unset: the package manager's default skips them (rule 8)", overridden) }
    : { install: true, decision: decision(null, 'default', true, "neither CC_NODE_DEV_DEPENDENCIES nor NODE_ENV=production: the package manager's default installs them (rule 8)", overridden) };
}

function decision(requested: string | null, source: string, install: boolean, reason: string, overridden: OverriddenSource[]): Decision {
  return decide({
    id: 'node.dev-dependencies',
    subject: 'Development dependencies',
    requests: [{ source, value: requested }],
    resolved: install ? 'installed' : 'not installed',
    reason,
    lost: overridden,
  });
}
