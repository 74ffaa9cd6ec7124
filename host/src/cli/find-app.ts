import { runProgram } from 'runplan/process';

const APP_IN_URL = /\/(app_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.git$/;

/**
 * "The application of the current code folder" (the specification's env set):
 * the application id in a git remote of this folder that points at this host
 * (`git+ssh://git@…/<app_id>.git`). None, or several different ones: undefined.
 */
export async function appOfFolder(cwd: string): Promise<string | undefined> {
  const result = await runProgram('git', ['config', '--get-regexp', '^remote\\..*\\.url$'], { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' } });
  if (!result?.ok) return undefined;
  const ids = new Set(
    result.stdout
      .split('\n')
      .map((line) => APP_IN_URL.exec(line.split(' ').slice(1).join(' ').trim())?.[1])
      .filter((id): id is string => id !== undefined),
  );
  return ids.size === 1 ? [...ids][0] : undefined;
}
