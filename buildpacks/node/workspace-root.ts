import { decide, type Decision, type FileSource } from '../../src/kit/index.js';
import { LOCKFILES } from './resolve-build-tool.js';

/** A workspace whose root is the repository's and whose member is the application (APP_FOLDER). */
export interface WorkspaceRoot {
  /** Lock files at the repository root, which the package manager uses from the member's folder. */
  readonly lockfiles: readonly string[];
  /** Whether the root has an .npmrc: npm reads that one, not the folder's, in a workspace. */
  readonly npmrc: boolean;
  readonly decision: Decision;
}

/** What the root's package.json and pnpm-workspace.yaml say (read at the edge, passed in). */
export interface RootEvidence {
  readonly packageJson: string | undefined;
  readonly pnpmWorkspace: boolean;
  readonly lockfiles: readonly string[];
  readonly npmrc: boolean;
}

/** The repository root's files a workspace keeps there. */
export async function readRootEvidence(repository: FileSource): Promise<RootEvidence> {
  const lockfiles: string[] = [];
  for (const { file } of LOCKFILES) if (await repository.exists(file)) lockfiles.push(file);
  return {
    packageJson: await repository.readText('package.json').catch(() => undefined),
    pnpmWorkspace: await repository.exists('pnpm-workspace.yaml'),
    lockfiles,
    npmrc: await repository.exists('.npmrc'),
  };
}

/**
 * The application's folder is a workspace member when it has no lock file of
 * its own and the repository root declares workspaces (package.json
 * `workspaces`, or pnpm-workspace.yaml) and holds the lock file: npm, Yarn,
 * pnpm and bun then install from the member's folder into the root, as they do
 * in a developer's checkout. Which folders are members is the tool's to decide
 * (its globs); a folder that is not one fails the install with the tool's error.
 */
export function resolveWorkspaceRoot(folder: string, folderLockfiles: readonly string[], root: RootEvidence): WorkspaceRoot | undefined {
  if (folderLockfiles.length > 0 || root.lockfiles.length === 0) return undefined;
  const manifest = declaresWorkspaces(root.packageJson) ? 'package.json workspaces' : root.pnpmWorkspace ? 'pnpm-workspace.yaml' : undefined;
  if (manifest === undefined) return undefined;
  const used = [...root.lockfiles, ...(root.npmrc ? ['.npmrc'] : [])];
  return {
    lockfiles: root.lockfiles,
    npmrc: root.npmrc,
    decision: decide({
      id: 'node.workspace',
      subject: 'workspace root of the application',
      basis: `repository root ${manifest}`,
      resolved: `the repository root, using its ${used.join(', ')}`,
      reason: `${folder} has no lock file and the repository root declares workspaces (${manifest}): the install runs from ${folder} against the root's lock file and installs into the root's node_modules, so the dependencies are not cached as a layer`,
    }),
  };
}

function declaresWorkspaces(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    const workspaces = (JSON.parse(text) as { workspaces?: unknown } | null)?.workspaces;
    const list = Array.isArray(workspaces) ? workspaces : (workspaces as { packages?: unknown } | undefined)?.packages;
    return Array.isArray(list) && list.length > 0;
  } catch {
    // The root's package.json is the workspace's, not the application's: a broken one declares nothing.
    return false;
  }
}
