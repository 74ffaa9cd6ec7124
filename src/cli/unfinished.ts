import type { EventEmitter } from 'node:events';
import { CoreErrors } from '../errors/core-errors.js';

/**
 * `work`, or RUNPLAN_E_CLI_UNFINISHED if Node.js runs out of things to wait for
 * first. A promise nothing will ever settle (a buildpack's, or a bug's) does not
 * keep Node.js alive: without this the process would end with exit status 0 and
 * no output, as if the command had done its work. 'beforeExit' is emitted when the
 * event loop is empty and the process is about to end; the command is then known
 * never to finish, and is reported as an error instead (the listener's rejection
 * schedules more work, so the process goes on to print it and exit with its status).
 */
export async function untilFinished<T>(work: Promise<T>, processEvents: EventEmitter = process): Promise<T> {
  let onEmpty = (): void => undefined;
  const stalled = new Promise<never>((_, reject) => {
    onEmpty = () =>
      reject(
        CoreErrors.CLI_UNFINISHED.create({
          message:
            'runplan was about to end before the command finished: it was waiting on something that nothing (no program, timer or connection) will ever complete, so the command did not do its work.',
        }),
      );
  });
  processEvents.once('beforeExit', onEmpty);
  try {
    return await Promise.race([work, stalled]);
  } finally {
    processEvents.off('beforeExit', onEmpty);
  }
}
