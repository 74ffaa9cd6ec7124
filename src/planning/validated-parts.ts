import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../files/atomic-write.js';

/**
 * Inventory parts a provider gave and the core validated in an earlier process,
 * recorded in the host's cache, so that a cold `runplan plan` does not validate
 * again the part the same provider gave last time (the Node.js part, 2,150
 * releases: some 8 ms of a cold CLI run with the garbage Zod leaves). A part is
 * trusted when the digest of its buildpack's id, its schema (as JSON Schema) and
 * its JSON is one recorded after Zod validated that part and gave it back
 * unchanged. The record sits beside the lists the providers keep in the same
 * cache, and is no more trusted than they are: whoever can write it can write them.
 */
const RECORD_FILE = 'validated-parts.txt';
/** Where providers keep what they fetched (the Node.js buildpack's lists). */
const INVENTORY_FOLDER = 'inventory';
/** Digests kept: a host's buildpacks and the lists they held over a few refreshes. */
const KEPT = 32;

const schemaTexts = new WeakMap<object, string | null>();
const records = new Map<string, string[]>();

/** The digest that names this part of this buildpack under this schema; undefined when one cannot be made (a schema without a JSON Schema, a value without JSON). */
export function partDigest(id: string, schema: z.ZodType, value: unknown): string | undefined {
  let schemaText = schemaTexts.get(schema);
  if (schemaText === undefined) {
    try {
      schemaText = JSON.stringify(z.toJSONSchema(schema));
    } catch {
      // Transforms and other types JSON Schema cannot say: such parts are always validated.
      schemaText = null;
    }
    schemaTexts.set(schema, schemaText);
  }
  if (schemaText === null) return undefined;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return undefined;
  }
  if (json === undefined) return undefined;
  return createHash('sha256').update(`${id}\0${schemaText}\0${json}`).digest('hex');
}

/** Whether a part with this digest was validated, by this process or one before it, with this cache. */
export function validatedBefore(cacheDir: string, digest: string): boolean {
  return recorded(cacheDir).includes(digest);
}

/**
 * Records a validated part's digest (the newest last), in the cache's inventory
 * folder when a provider keeps its lists there: never made for the record alone.
 * A record that cannot be written costs the next process a validation, nothing else.
 */
export async function recordValidated(cacheDir: string, digest: string): Promise<void> {
  const kept = [...recorded(cacheDir).filter((d) => d !== digest), digest].slice(-KEPT);
  records.set(cacheDir, kept);
  if (!statSync(join(cacheDir, INVENTORY_FOLDER), { throwIfNoEntry: false })?.isDirectory()) return;
  await writeFileAtomic(recordPath(cacheDir), `${kept.join('\n')}\n`).catch(() => undefined);
}

function recorded(cacheDir: string): string[] {
  let digests = records.get(cacheDir);
  if (digests === undefined) {
    let text = '';
    try {
      text = readFileSync(recordPath(cacheDir), 'utf8');
    } catch {
      // No record yet.
    }
    digests = text.split('\n').filter((line) => /^[0-9a-f]{64}$/.test(line));
    records.set(cacheDir, digests);
  }
  return digests;
}

function recordPath(cacheDir: string): string {
  return join(cacheDir, INVENTORY_FOLDER, RECORD_FILE);
}
