/**
 * `runplan/process/attached`: a program run on the caller's own streams, for a
 * program that starts often and must start at Node.js's own cost (runplan-host's
 * git program): this entry imports nothing but Node.js. Everything else about
 * running programs is `runplan/process`.
 *
 * @packageDocumentation
 */
export { type AttachedOutcome, runAttached } from './attached-program.js';
