import semver from 'semver';
import type { Decision } from '../../src/kit/index.js';

/**
 * NODE_OPTIONS for the build and the processes: V8's old-space limit set to three
 * quarters of the memory the host declares, so that the garbage collector works
 * before the instance runs out of memory, unless the user set a limit already.
 * NODE_OPTIONS exists since Node.js 8; older versions get nothing.
 */
export function resolveNodeOptions(userValue: string | undefined, memoryMb: number, nodeVersion: string): { value: string | undefined; decision: Decision } {
  const limit = Math.floor((memoryMb * 3) / 4);
  const base = { id: 'node.options', subject: 'NODE_OPTIONS', requested: userValue ?? null, overridden: [] };
  if (/--max[-_]old[-_]space[-_]size(=|\s|$)/.test(userValue ?? '')) {
    return { value: undefined, decision: { ...base, source: 'env NODE_OPTIONS', resolved: userValue as string, reason: 'the user already sets --max-old-space-size, which is kept' } };
  }
  if (semver.lt(nodeVersion, '8.0.0')) {
    return { value: undefined, decision: { ...base, source: 'default', resolved: userValue ?? '(unset)', reason: `Node.js ${nodeVersion} does not read NODE_OPTIONS (added in 8.0.0)` } };
  }
  const value = [userValue?.trim(), `--max-old-space-size=${limit}`].filter((p) => p !== undefined && p !== '').join(' ');
  return {
    value,
    decision: {
      ...base,
      source: userValue === undefined ? 'host instance memory' : 'env NODE_OPTIONS + host instance memory',
      resolved: value,
      reason: `three quarters of the ${memoryMb} MB the host declares (${limit} MB) as V8's heap limit${userValue === undefined ? '' : ", added to the user's NODE_OPTIONS"}`,
    },
  };
}
