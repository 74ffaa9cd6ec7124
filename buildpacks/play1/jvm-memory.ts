import { decide, type Decision, type InstanceSize } from '../../src/kit/index.js';
import type { AppliedEntry } from './application-conf.js';

/**
 * How much of the instance's memory the JVM heap gets. What is not heap —
 * metaspace, thread stacks, the code cache, direct buffers and the `play`
 * launcher — is kept back: a share of the memory, within bounds.
 */
export interface JvmSizing {
  /** Share of the instance's memory kept outside the heap, in percent. */
  readonly reservePercent: number;
  readonly minReserveMb: number;
  readonly maxReserveMb: number;
  /** The heap never gets less than this, however small the instance. */
  readonly minHeapMb: number;
}

/** How much of an instance's memory the JVM's heap gets by default. */
export const DEFAULT_JVM_SIZING: JvmSizing = { reservePercent: 25, minReserveMb: 128, maxReserveMb: 1024, minHeapMb: 64 };

export interface HeapSize {
  readonly reserveMb: number;
  readonly maxHeapMb: number;
  /** A quarter of the maximum: a small application does not hold memory it never uses. */
  readonly initialHeapMb: number;
}

/** The JVM's heap for an instance's memory: what is reserved beside it, the maximum and the initial heap. */
export function heapSize(memoryMb: number, sizing: JvmSizing = DEFAULT_JVM_SIZING): HeapSize {
  const reserveMb = Math.min(sizing.maxReserveMb, Math.max(sizing.minReserveMb, Math.round((memoryMb * sizing.reservePercent) / 100)));
  const maxHeapMb = Math.max(sizing.minHeapMb, memoryMb - reserveMb);
  return { reserveMb, maxHeapMb, initialHeapMb: Math.max(16, Math.floor(maxHeapMb / 4)) };
}

export interface JvmMemory {
  /** Arguments given to `play run`; empty when application.conf's jvm.memory applies. */
  readonly args: readonly string[];
  readonly decision: Decision;
}

/**
 * The JVM memory options of the web process. Play's launcher adds
 * application.conf's `jvm.memory` only when no -Xm… argument is given, so a
 * `jvm.memory` (or `%platform.jvm.memory`) the application sets wins; otherwise
 * the heap is derived from the instance size.
 */
export function resolveJvmMemory(instance: InstanceSize, confMemory: AppliedEntry | undefined, sizing: JvmSizing = DEFAULT_JVM_SIZING): JvmMemory {
  const size = heapSize(instance.memoryMb, sizing);
  const derived = [`-Xmx${size.maxHeapMb}m`, `-Xms${size.initialHeapMb}m`];
  const rule =
    `the instance has ${instance.memoryMb} MB; ${sizing.reservePercent}% of it (at least ${sizing.minReserveMb} MB, at most ${sizing.maxReserveMb} MB: ` +
    `${size.reserveMb} MB) is kept for metaspace, thread stacks, code cache and the launcher, the rest is the maximum heap, and the initial heap is a quarter of it`;
  if (confMemory && confMemory.value.trim() !== '') {
    return {
      args: [],
      decision: decide({
        id: 'play1.jvm-memory',
        subject: 'JVM memory options',
        requests: [
          { source: `conf/application.conf ${confMemory.writtenAs} (line ${confMemory.line})`, value: confMemory.value },
          { source: `instance size (${instance.memoryMb} MB)`, value: derived.join(' ') },
        ],
        resolved: confMemory.value,
        reason: "application.conf sets jvm.memory for this framework id, and Play's launcher applies it when no -Xm… option is given, so none is given",
        outranked: () => "the application's jvm.memory wins over the size-derived options",
      }),
    };
  }
  return {
    args: derived,
    decision: decide({
      id: 'play1.jvm-memory',
      subject: 'JVM memory options',
      basis: `instance size (${instance.memoryMb} MB, ${instance.cpus} CPU${instance.cpus === 1 ? '' : 's'})`,
      resolved: derived.join(' '),
      reason: `${rule}; application.conf sets no jvm.memory`,
    }),
  };
}
