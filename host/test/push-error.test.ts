import { describe, expect, it } from 'vitest';
import { HOST_ERROR_DEFINITIONS } from '../src/error-definitions.js';
import { HostErrors } from '../src/errors.js';
import { oneLine } from '../src/git/one-line.js';
import { PushError } from '../src/git/push-error.js';

/** The git program's errors are made without runplan (push-error.ts): the pusher must read what HostErrors would have said. */
describe('PushError', () => {
  it('has the code, message and fix of the HostErrors definition it names, for every code', () => {
    for (const key of Object.keys(HOST_ERROR_DEFINITIONS) as Array<keyof typeof HOST_ERROR_DEFINITIONS>) {
      const cause = new Error('underneath');
      for (const occurrence of [{ message: 'what happened' }, { message: 'what happened', fix: 'a fix of this occurrence', cause }]) {
        const ours = new PushError(key, occurrence);
        const runplans = HostErrors[key].create(occurrence);
        expect({ code: ours.code, message: ours.message, fix: ours.fix, cause: ours.cause }, key).toEqual({
          code: runplans.code,
          message: runplans.message,
          fix: runplans.fix,
          cause: runplans.cause,
        });
      }
    }
  });

  it('is one line for the pusher, with its code and fix', () => {
    const error = new PushError('PUSH_DENIED', { message: 'the key key_0123456789ab may not\npush to app_x' });
    expect(oneLine(error)).toBe(`${HostErrors.PUSH_DENIED.code}: the key key_0123456789ab may not push to app_x (${HostErrors.PUSH_DENIED.fix})`);
    expect(oneLine(new Error('plain'))).toBe('runplan-host: plain');
  });
});
