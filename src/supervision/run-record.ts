import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { RUNPLAN_VERSION } from '../version.js';

/**
 * The format of a lasting run's record. A later runplan takes over only runs
 * of a format it knows; one of another format is deployed again (its host says
 * why), never driven with rules it was not made with.
 */
export const RUN_FORMAT = 1;

const RestartSchema = z.object({
  policy: z.enum(['always', 'on-failure', 'never']),
  initialDelayMs: z.number(),
  maxDelayMs: z.number(),
  resetAfterMs: z.number(),
});

/**
 * What a program that takes over a lasting run needs to follow and stop it, and
 * nothing secret (the processes' environment is in their service directories,
 * root's own): the build it runs in, its run directory, its user, its walls
 * (the cgroup's name and limits), the files that go when it stops, and each
 * process as its supervisor keeps it.
 */
const RunRecordSchema = z.object({
  format: z.number().int(),
  runplanVersion: z.string(),
  runId: z.string(),
  /** The build's application folder: in use while the run lasts. */
  appDir: z.string(),
  /** ${RUN_DIR}: made for the run, removed with it. */
  runDir: z.string(),
  user: z.object({ name: z.string(), uid: z.number().int(), gid: z.number().int(), dropped: z.boolean() }),
  /** The run's token: a log line that begins with it is its supervisor's. */
  marker: z.string(),
  /** Run files with secrets (paths in the build), removed when the run stops. */
  secretRunFiles: z.array(z.string()),
  /** The run's walls: its cgroup phase, opened again to count its limits and to close it. */
  scope: z
    .object({
      name: z.string(),
      limits: z.object({ cpus: z.number(), memoryMb: z.number(), processes: z.number() }),
      writable: z.array(z.string()),
      network: z.object({ path: z.string() }).optional(),
    })
    .optional(),
  processes: z.array(
    z.object({
      name: z.string(),
      role: z.enum(['web', 'worker']),
      cwd: z.string(),
      restart: RestartSchema,
      stopGraceMs: z.number(),
    }),
  ),
  startedAt: z.string(),
});

/** A lasting run's record (run.json in its directory of the supervision tree): what taking it over needs, nothing secret. */
export type RunRecord = z.infer<typeof RunRecordSchema>;

export function newRunRecord(fields: Omit<RunRecord, 'format' | 'runplanVersion' | 'startedAt'>): RunRecord {
  return { format: RUN_FORMAT, runplanVersion: RUNPLAN_VERSION, startedAt: new Date().toISOString(), ...fields };
}

const FILE = 'run.json';

/** Written whole or not at all (root's, 0600). */
export async function writeRunRecord(runDir: string, record: RunRecord): Promise<void> {
  const temp = join(runDir, `${FILE}.new`);
  await writeFile(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, join(runDir, FILE));
}

/** Why a run cannot be taken over, and where its run directory and user are when the record says so (to remove what it left). */
export interface RunRecordProblem {
  readonly problem: string;
  readonly leftovers?: Pick<RunRecord, 'runDir' | 'user'>;
}

/** The record of a run, or why there is none to take over: missing, unreadable, or of another format. */
export async function readRunRecord(runDir: string): Promise<RunRecord | RunRecordProblem> {
  let text: string;
  try {
    text = await readFile(join(runDir, FILE), 'utf8');
  } catch {
    return { problem: 'it has no record (it was never started, or its start was cut short)' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'its record is not JSON' };
  }
  // Whatever the format, a run directory and a user that read as this format's are what the run left to remove.
  const leftovers = RunRecordSchema.pick({ runDir: true, user: true }).safeParse(value);
  const withLeftovers = (problem: string): RunRecordProblem => ({ problem, ...(leftovers.success ? { leftovers: leftovers.data } : {}) });
  const format = (value as { format?: unknown }).format;
  if (format !== RUN_FORMAT) {
    const by = (value as { runplanVersion?: unknown }).runplanVersion;
    return withLeftovers(
      `it was started by runplan ${typeof by === 'string' ? by : 'of another version'} with run format ${String(format)}, and this runplan (${RUNPLAN_VERSION}) takes over format ${RUN_FORMAT} only`,
    );
  }
  const parsed = RunRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : withLeftovers(`its record does not read as format ${RUN_FORMAT}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
}
