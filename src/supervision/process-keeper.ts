import type { ProcessExit, ProcessState } from '../executor/contract.js';
import type { LoweredProcess } from '../lowering/lower.js';

/**
 * One process of a run kept running by its restart policy: by runplan itself
 * (SupervisedProcess: a child of runplan's process, for the CLI and a host that
 * lives as long as its runs) or by s6 (LastingProcess: a run that outlives
 * runplan's process, for a host's releases).
 */
export interface ProcessKeeper {
  readonly spec: LoweredProcess;
  /** Starts it; resolves once it runs. */
  start(): Promise<void>;
  state(): ProcessState;
  /** Tells `listener` each exit it makes by itself; returns the function that stops telling. */
  onExit(listener: (exit: ProcessExit) => void): () => void;
  /** Stops it for good (SIGTERM, its grace, SIGKILL) and resolves once nothing of it runs. */
  stop(): Promise<void>;
}
