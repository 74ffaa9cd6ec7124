import type { StepFailure } from '../../src/buildpack/contract.js';
import type { RunplanError } from '../../src/errors/runplan-error.js';
import { NodeErrors } from './errors.js';

/** How npm, Yarn, pnpm and bun report a registry refusing credentials. */
const AUTH_REFUSED = /\bE40[13]\b|\b40[13] (Unauthorized|Forbidden)\b|ERR_PNPM_FETCH_40[13]|Request failed "40[13]|status code 40[13]|\bYN0041\b|authentication required/i;

/** A failed install whose output shows the registry refusing the token becomes NODE_REGISTRY_AUTH_FAILED. */
export function diagnoseNodeFailure({ step, exitCode, output }: StepFailure): RunplanError | undefined {
  if (step.name !== 'install' || !output.some((line) => AUTH_REFUSED.test(line))) return undefined;
  return NodeErrors.NODE_REGISTRY_AUTH_FAILED.create({
    message: `step "install" failed with exit status ${exitCode}: the package registry refused the request (401/403), so the token is missing, wrong or not valid for that registry.`,
    variable: 'NPM_TOKEN',
    details: { step: step.name, exitCode },
  });
}
