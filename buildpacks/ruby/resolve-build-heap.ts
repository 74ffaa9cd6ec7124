import { decide, type Decision, type InstanceSize } from '../../src/kit/index.js';

/**
 * With a dedicated build instance (advised for webpacker, whose Node.js build
 * needs much memory at start), the rake goals and build hooks tell Node.js its
 * heap: three quarters of that instance's memory, as the Node.js buildpack
 * sizes it. Without one, or when the application's NODE_OPTIONS already sets the
 * limit, nothing is added and Node.js keeps its own default.
 */
export function resolveBuildHeap(userNodeOptions: string | undefined, buildInstance: InstanceSize | undefined): { env: Record<string, string>; decision: Decision | undefined } {
  if (buildInstance === undefined) return { env: {}, decision: undefined };
  const subject = { id: 'ruby.build-node-options', subject: 'NODE_OPTIONS of the build (webpacker)', requests: [{ source: 'env NODE_OPTIONS', value: userNodeOptions ?? null }] };
  if (/--max[-_]old[-_]space[-_]size(=|\s|$)/.test(userNodeOptions ?? '')) {
    return { env: {}, decision: decide({ ...subject, resolved: userNodeOptions as string, reason: 'the application already sets --max-old-space-size, which is kept' }) };
  }
  const limit = Math.floor((buildInstance.memoryMb * 3) / 4);
  const value = [userNodeOptions?.trim(), `--max-old-space-size=${limit}`].filter((p) => p !== undefined && p !== '').join(' ');
  return {
    env: { NODE_OPTIONS: value },
    decision: decide({
      ...subject,
      resolved: value,
      reason: `three quarters of the ${buildInstance.memoryMb} MB of the dedicated build instance (${limit} MB) as V8's heap limit in the rake goals and build hooks (webpacker's Node.js build)`,
    }),
  };
}
