import { defineErrors, listDefinitions } from 'runplan/buildpack';
import { HOST_CODE_PREFIX, HOST_ERROR_DEFINITIONS } from './error-definitions.js';

/** The host's errors (their definitions: error-definitions.ts), raised as runplan's RunplanError. */
export const HostErrors = defineErrors(HOST_ERROR_DEFINITIONS, { prefix: HOST_CODE_PREFIX });

/** Every code of the host, for docs/errors.md and its tests. */
export function hostErrorDefinitions() {
  return listDefinitions(HostErrors);
}
