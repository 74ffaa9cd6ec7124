import { HOST_CODE_PREFIX, HOST_ERROR_DEFINITIONS } from '../error-definitions.js';

type HostErrorKey = keyof typeof HOST_ERROR_DEFINITIONS;

/** What happened, and a fix more precise than the code's own: as HostErrors.<KEY>.create() takes them. */
interface PushErrorOccurrence {
  readonly message: string;
  readonly fix?: string;
  readonly cause?: unknown;
}

/**
 * An error of the git program (git-main.ts) for the pusher: the code, message and
 * fix that HostErrors.<KEY>.create() would give (host/test/push-error.test.ts
 * compares them), without runplan. sshd and git start that program twice per
 * push, and runplan's entry points would bring zod, yaml and execa into it: 1.8 MB
 * to parse at each start, for an error registry and one spawn. It never leaves
 * that process, so it needs no RunplanError brand.
 */
export class PushError extends Error {
  readonly code: string;
  readonly fix: string;

  constructor(key: HostErrorKey, occurrence: PushErrorOccurrence) {
    const code = `${HOST_CODE_PREFIX}_E_${key}`;
    super(`${code}: ${occurrence.message}`, occurrence.cause === undefined ? undefined : { cause: occurrence.cause });
    this.name = 'PushError';
    this.code = code;
    this.fix = occurrence.fix ?? HOST_ERROR_DEFINITIONS[key].fix;
  }
}
