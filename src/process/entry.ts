/**
 * `runplan/process`: how runplan runs a program, for a host built on runplan
 * (runplan-host uses it) as for runplan's own code: one runner with its
 * environment rule (a child gets an allow-list of the machine's variables, never
 * the caller's whole environment), atomic writes, and the clock tests hold still.
 *
 * @packageDocumentation
 */
export { runProgram, type ProgramResult, type RunProgramOptions } from './run-program.js';
export { SYSTEM_VARIABLES, systemEnvironment, childEnvironment } from './process-env.js';
export { writeFileAtomic } from '../files/atomic-write.js';
export { systemClock, InstantClock, type Clock } from '../time/clock.js';
