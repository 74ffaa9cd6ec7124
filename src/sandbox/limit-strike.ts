import { CoreErrors } from '../errors/core-errors.js';
import { CoreWarnings } from '../errors/core-warnings.js';
import type { RunplanError } from '../errors/runplan-error.js';
import type { LimitCounters, ResourceLimits } from './cgroups.js';

/** A limit that struck between two readings of a scope's counters. */
export interface LimitStrike {
  readonly resource: 'memory' | 'processes' | 'disk';
  /** The limit, in words: "1 GiB of memory", "1024 processes and threads". */
  readonly limit: string;
  /** How a process ended by it reads: "was killed: it used more than its 1 GiB of memory". */
  readonly how: string;
  /** The coded line of a process that was killed (or refused a fork) and goes on or restarts. */
  warning(process: string): string;
  /** The coded error of a build step that failed by it. */
  buildError(step: string, description: string): RunplanError;
}

/** The memory strike first: a killed process explains a failure better than a refused fork. */
export function limitStrike(limits: ResourceLimits, before: LimitCounters, after: LimitCounters): LimitStrike | undefined {
  if (after.oomKills > before.oomKills) {
    const limit = `${formatMemory(limits.memoryMb)} of memory`;
    return {
      resource: 'memory',
      limit,
      how: `was killed: it used more than its ${limit}`,
      warning: (process) => `${CoreWarnings.RUN_MEMORY_LIMIT.code}: ${process} was killed: the application used more than its ${limit} (its instance's, for all its processes together)`,
      buildError: (step, description) =>
        CoreErrors.BUILD_MEMORY_LIMIT.create({
          message: `step "${step}" (${description}) was killed: the build used more than its ${limit}.`,
          details: { step, memoryMb: limits.memoryMb },
        }),
    };
  }
  if (after.processLimitHits > before.processLimitHits) {
    const limit = `${limits.processes} processes and threads`;
    return {
      resource: 'processes',
      limit,
      how: `failed after it reached its limit of ${limit}`,
      warning: (process) => `${CoreWarnings.RUN_PROCESS_LIMIT.code}: ${process} reached the application's limit of ${limit}: new processes and threads were refused`,
      buildError: (step, description) =>
        CoreErrors.BUILD_PROCESS_LIMIT.create({
          message: `step "${step}" (${description}) failed after the build reached its limit of ${limit}: new processes and threads were refused.`,
          details: { step, processes: limits.processes },
        }),
    };
  }
  if (after.diskFull) {
    const limit = `${formatMemory(limits.diskMb ?? 0)} of disk`;
    return {
      resource: 'disk',
      limit,
      how: `failed while the application's disk was full (its ${limit})`,
      warning: (process) => `${CoreWarnings.RUN_DISK_LIMIT.code}: ${process} ended while the application's disk was full: it has used its ${limit}, and writes fail with ENOSPC`,
      buildError: (step, description) =>
        CoreErrors.BUILD_DISK_LIMIT.create({
          message: `step "${step}" (${description}) failed with the application's disk full: its builds and files have used its ${limit}.`,
          details: { step, diskMb: limits.diskMb },
        }),
    };
  }
  return undefined;
}

/** 1024 → "1 GiB", 1536 → "1.5 GiB", 512 → "512 MiB". */
export function formatMemory(mb: number): string {
  if (mb < 1024) return `${mb} MiB`;
  const gib = mb / 1024;
  return `${Number.isInteger(gib) ? gib : gib.toFixed(1)} GiB`;
}
