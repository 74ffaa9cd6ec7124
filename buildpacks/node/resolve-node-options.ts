import semver from 'semver';
import { decide, type Decision } from '../../src/kit/index.js';

/**
 * NODE_OPTIONS for the build and the processes: V8's old-space limit set to three
 * quarters of the memory the host declares, so that the garbage collector works
 * before the instance runs out of memory, unless the user set a limit already.
 * NODE_OPTIONS exists since Node.js 8; older versions get nothing.
 */
export function resolveNodeOptions(
  userValue: string | undefined,
  memoryMb: number,
  nodeVersion: string,
  sizedFor: 'instance' | 'build instance' = 'instance',
): { value: string | undefined; decision: Decision } {
  const limit = Math.floor((memoryMb * 3) / 4);
  const build = sizedFor === 'build instance';
  const decision = (source: string, resolved: string, reason: string) =>
    decide({ id: build ? 'node.build-options' : 'node.options', subject: build ? 'NODE_OPTIONS of the build' : 'NODE_OPTIONS', requests: [{ source, value: userValue ?? null }], resolved, reason });
  if (/--max[-_]old[-_]space[-_]size(=|\s|$)/.test(userValue ?? '')) {
    return { value: undefined, decision: decision('env NODE_OPTIONS', userValue as string, 'the user already sets --max-old-space-size, which is kept') };
  }
  if (semver.lt(nodeVersion, '8.0.0')) {
    return { value: undefined, decision: decision('default', userValue ?? '(unset)', `Node.js ${nodeVersion} does not read NODE_OPTIONS (added in 8.0.0)`) };
  }
  const value = [userValue?.trim(), `--max-old-space-size=${limit}`].filter((p) => p !== undefined && p !== '').join(' ');
  return {
    value,
    decision: decision(
      `${userValue === undefined ? '' : 'env NODE_OPTIONS + '}host ${sizedFor} memory`,
      value,
      `three quarters of the ${memoryMb} MB the host declares${build ? ' for the dedicated build instance' : ''} (${limit} MB) as V8's heap limit${build ? ' in the build steps and hooks' : ''}${userValue === undefined ? '' : ", added to the user's NODE_OPTIONS"}`,
    ),
  };
}
