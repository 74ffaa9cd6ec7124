import { resolve, sep } from 'node:path';

/**
 * The application folders whose processes run now, in this process: a build
 * they run in must outlive the next promotion. A host starts a new release while
 * the one it replaced still drains, so the build made current next — by a deploy
 * that began during that drain — must not remove the draining release's folder;
 * "keep the current build and the one it replaces" is not enough once deploys no
 * longer wait for the drain. A build kept for this is removed by the first
 * promotion after its processes stopped.
 *
 * In memory: the processes are this process's children (the local runner), and
 * none survives it to need its folder.
 */
const running = new Map<string, number>();

/** Marks `appDir` (a build, or its APP_FOLDER) as in use until the returned function is called (once). */
export function useBuild(appDir: string): () => void {
  const dir = resolve(appDir);
  running.set(dir, (running.get(dir) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const n = (running.get(dir) ?? 1) - 1;
    if (n > 0) running.set(dir, n);
    else running.delete(dir);
  };
}

/** Whether processes run in the build `buildDir` (in it or in one of its folders). */
export function buildInUse(buildDir: string): boolean {
  const dir = resolve(buildDir);
  for (const used of running.keys()) if (used === dir || used.startsWith(dir + sep)) return true;
  return false;
}
