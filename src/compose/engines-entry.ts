/**
 * `runplan/engines`: the engines runplan carries a plan out on, in one table —
 * this machine, Docker, podman (Kubernetes) and Swarm — each making the
 * Executor that the one deploy flow (`deploy` of `runplan`) drives. The CLI
 * chooses from it, and so does runplan-host.
 *
 * @packageDocumentation
 */
export { ENGINES, type EngineEntry, type EngineName, type EngineOptions } from './engine-table.js';
