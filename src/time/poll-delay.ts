/**
 * How long to wait before polling again for something that is starting (a port
 * opening, a socket answering), given how long it has been waited for already.
 * Most applications are up within a second or two: polling often then makes
 * "healthy" follow the application by a few milliseconds; a slow boot (a JVM,
 * Rails) is polled less often, so that a long wait does not cost a connection
 * attempt every few milliseconds.
 */
export function pollDelay(waitedMs: number): number {
  if (waitedMs < 2_000) return 20;
  if (waitedMs < 10_000) return 50;
  return 250;
}
