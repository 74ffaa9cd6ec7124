/** The signals that ask a host program to stop cleanly. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface StopSignals {
  /** Resolves with the first stop signal received. */
  readonly received: Promise<NodeJS.Signals>;
  /** The first stop signal received so far, if any. */
  readonly signal: NodeJS.Signals | undefined;
  /** Removes the listeners (tests; a program keeps them until it exits). */
  dispose(): void;
}

/**
 * Listens for SIGTERM and SIGINT for as long as the program runs. The listeners stay registered after the first
 * signal, and that is the point: execa's exit hook (signal-exit) sends a signal to the process again when it
 * finds only its own listeners for it, and a `process.once` listener is removed before that check runs. With
 * `once`, a stop signal arriving while a child started through execa was running killed serve by that signal,
 * leaving what it started behind. A second signal during the stop is ignored: the stop under way finishes.
 */
export function listenForStopSignals(): StopSignals {
  let first: NodeJS.Signals | undefined;
  let resolveReceived: (signal: NodeJS.Signals) => void = () => undefined;
  const received = new Promise<NodeJS.Signals>((resolve) => {
    resolveReceived = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    if (first !== undefined) return;
    first = signal;
    resolveReceived(signal);
  };
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  return {
    received,
    get signal() {
      return first;
    },
    dispose() {
      for (const name of STOP_SIGNALS) process.off(name, onSignal);
    },
  };
}
