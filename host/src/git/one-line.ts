import { PushError } from './push-error.js';

/**
 * An error as the pusher sees it: one line (git and ssh show the remote's
 * stderr as is, or as `remote: …`), with the code, what happened and the fix.
 */
export function oneLine(error: unknown): string {
  if (error instanceof PushError) return flatten(`${error.message} (${error.fix})`);
  return flatten(`runplan-host: ${error instanceof Error ? error.message : String(error)}`);
}

function flatten(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').replace(/[\u0000-\u001f\u007f]/g, '');
}
