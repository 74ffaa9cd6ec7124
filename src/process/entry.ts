/**
 * `runplan/process`: how runplan runs a program, for a host built on runplan
 * (runplan-host uses it) as for runplan's own code: one runner, for a short
 * program (`runProgram`) as for a server that lives long (`startProgram`), with its
 * environment rule (a child gets an allow-list of the machine's variables, never
 * the caller's whole environment), atomic writes, and the clock tests hold still.
 *
 * @packageDocumentation
 */
export { runProgram, startProgram, type ProgramOutcome, type ProgramResult, type RunningProgram, type RunProgramOptions, type StartProgramOptions } from './run-program.js';
export { SYSTEM_VARIABLES, systemEnvironment, childEnvironment } from './process-env.js';
export { writeFileAtomic } from '../files/atomic-write.js';
export { bootId, formatIdentity, identifyProcess, isRunning, parseIdentity, processArguments, processStartTime, type ProcessIdentity, watchUntilGone } from './process-identity.js';
export { systemClock, InstantClock, type Clock } from '../time/clock.js';
