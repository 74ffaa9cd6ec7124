import { createHash } from 'node:crypto';
import { lstatSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import type { Buildpack } from '../buildpack/contract.js';
import type { Environment } from '../env/assemble.js';
import type { Detection, RunPlan } from '../plan/schema.js';
import { type Clock, systemClock } from '../time/clock.js';

/** Options of a PlanCache. */
export interface PlanCacheOptions {
  /** How many applications' plans it keeps (default 64; the least recently used goes first). */
  readonly entries?: number;
  /** Whose time tells how old a file is (tests give one ahead of the files they just wrote). */
  readonly clock?: Clock;
}

/**
 * A file changed this recently may change again within the file system's
 * timestamp granularity (a few milliseconds; seconds on some file systems)
 * without its size or times telling: a plan that read it is not kept, as git
 * does not trust an index entry as new as the index ("racy git").
 */
const RACY_MS = 2_000;

/** Where an application on disk is planned from: its root and folder, and the type asked for. */
export interface PlanSite {
  readonly root: string;
  readonly realRoot: string;
  readonly folder: string;
  readonly type: string | undefined;
}

/** What, besides the application's files, a plan was made from. */
export interface PlanInputs {
  /** A digest of the environment the buildpack saw (names, values, sources, secrecy): values are not kept. */
  readonly environment: string;
  readonly host: string;
  readonly inventoryPart: unknown;
  readonly previous: RunPlan | undefined;
}

/** A plan kept with what it was made from, besides the files. */
export interface KeptPlan {
  readonly inputs: PlanInputs;
  /** The plan as JSON: each caller gets a copy of its own (parsing it is quicker than structuredClone). */
  readonly plan: string;
  /** The buildpack's defaults, put on the environment of every plan given out again. */
  readonly envDefaults: readonly { name: string; value: string; origin: string }[];
}

/** A plan just made, as keep takes it: its JSON is written only when the plan is kept (a fresh checkout's is not). */
export type MadePlan = Omit<KeptPlan, 'plan'> & { readonly json: () => string };

/** An application's kept plans: its detection, and every file its plans looked at. */
export interface KeptSite {
  readonly detection: Detection;
  readonly buildpack: Buildpack;
  readonly buildpacks: readonly Buildpack[];
  /** Every path detection and planning looked at, with what lstat said of it then. */
  readonly files: ReadonlyMap<string, string>;
  /** Plans of these files made from different inputs (another environment, host, inventory…), the latest last. */
  readonly plans: readonly KeptPlan[];
}

/** Plans kept per application: a host plans one with a few environments (the build's, the run's…) and no more. */
const PLANS_PER_SITE = 4;

/**
 * Plans made from applications on disk, given out again while nothing they were
 * made from changed: the buildpacks, the environment, the host settings, the
 * inventory, the previous plan, and every file and directory detection and
 * planning read, listed or looked for (checked with one lstat each, as a build
 * tool checks its inputs). A host plans the same application on every push,
 * restart and explanation; createPlan keeps one cache for the process.
 */
export class PlanCache {
  private readonly sites = new Map<string, KeptSite>();
  private readonly limit: number;
  private readonly clock: Clock;

  constructor(options: PlanCacheOptions = {}) {
    this.limit = options.entries ?? 64;
    this.clock = options.clock ?? systemClock;
  }

  /** The time planning starts: files changed after (RACY_MS before) it are too new to keep a plan of. */
  now(): number {
    return this.clock.now();
  }

  /** What is kept of `site` while all its files are as they were and the buildpacks the same; undefined if nothing. */
  find(site: PlanSite, buildpacks: readonly Buildpack[]): KeptSite | undefined {
    const key = keyOf(site);
    const kept = this.sites.get(key);
    if (kept === undefined) return undefined;
    this.sites.delete(key);
    if (!sameList(kept.buildpacks, buildpacks) || !unchanged(kept.files)) return undefined;
    // Most recently used last: the first is the next to go.
    this.sites.set(key, kept);
    return kept;
  }

  /**
   * Keeps a plan made at `started` from the files in `lookedAt` (with those of
   * `earlier`, what find gave for the same site, whose detection it used),
   * unless one of them is too new to be trusted.
   */
  keep(site: PlanSite, started: number, lookedAt: Iterable<string>, made: Omit<KeptSite, 'files' | 'plans'> & MadePlan, earlier: KeptSite | undefined): void {
    const signed = signatures(site.realRoot, lookedAt, earlier?.files, started - RACY_MS);
    if (signed === undefined) return;
    const { detection, buildpack, buildpacks, json, ...rest } = made;
    const plan: KeptPlan = { ...rest, plan: json() };
    const others = (earlier?.plans ?? []).filter((p) => !sameInputs(p.inputs, plan.inputs)).slice(1 - PLANS_PER_SITE);
    const key = keyOf(site);
    this.sites.delete(key);
    this.sites.set(key, { detection, buildpack, buildpacks, files: signed, plans: [...others, plan] });
    while (this.sites.size > this.limit) this.sites.delete(this.sites.keys().next().value as string);
  }
}

/** The plan of `site` made from `inputs`, if kept. */
export function keptPlan(site: KeptSite, inputs: PlanInputs): KeptPlan | undefined {
  return site.plans.find((p) => sameInputs(p.inputs, inputs));
}

/** Whether a kept plan was made from these inputs: the same objects, or the same text. */
function sameInputs(a: PlanInputs, b: PlanInputs): boolean {
  return a.environment === b.environment && a.host === b.host && a.inventoryPart === b.inventoryPart && a.previous === b.previous;
}

/**
 * The environment as a buildpack sees it, as a digest: every variable's name,
 * value, source, origin and secrecy, the withheld ones, the losers and the
 * declared secret names. The digest only: the cache holds no secret value.
 */
export function environmentDigest(environment: Environment, secretNames: readonly string[]): string {
  const entry = (e: { name: string; value: string; source: string; origin: string; secret: boolean }) => [e.name, e.value, e.source, e.origin, e.secret];
  const text = JSON.stringify([environment.list().map(entry), environment.withheldList().map(entry), environment.shadowed, secretNames]);
  return createHash('sha256').update(text).digest('base64');
}

function keyOf(site: PlanSite): string {
  return `${site.root}\0${site.realRoot}\0${site.folder}\0${site.type ?? ''}`;
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * What lstat says of each path looked at and of each directory above it up to
 * the application's root (a directory replaced by a link changes the answer),
 * each directory before what is in it. Undefined, and no plan kept, when one is
 * a link (the application's own: the cache never follows one, even to look),
 * cannot be looked at, or changed at `trustedBefore` or later.
 */
function signatures(realRoot: string, lookedAt: Iterable<string>, known: ReadonlyMap<string, string> | undefined, trustedBefore: number): ReadonlyMap<string, string> | undefined {
  // Those known were checked unchanged when this plan started (and are older than RACY_MS).
  const byPath = new Map(known);
  // False ends the look: a host plans the checkout it has just written, so the first file too new already says no plan is kept.
  const sign = (path: string): boolean => {
    if (byPath.has(path)) return true;
    const info = lstatSync(path, { throwIfNoEntry: false });
    if (info?.isSymbolicLink() || (info && (info.mtimeMs >= trustedBefore || info.ctimeMs >= trustedBefore))) return false;
    byPath.set(path, signature(info));
    return true;
  };
  try {
    if (!sign(realRoot)) return undefined;
    for (const path of lookedAt) {
      const above: string[] = [];
      for (let dir = dirname(path); dir.length > realRoot.length && dir.startsWith(realRoot); dir = dirname(dir)) above.push(dir);
      for (const dir of above.reverse()) if (!sign(dir)) return undefined;
      if (!sign(path)) return undefined;
    }
  } catch {
    return undefined;
  }
  return byPath;
}

/** Whether every path is as it was, looked at in the order kept (a directory before what is in it: a link in its place ends the check). */
function unchanged(files: ReadonlyMap<string, string>): boolean {
  try {
    for (const [path, text] of files) if (signature(lstatSync(path, { throwIfNoEntry: false })) !== text) return false;
  } catch {
    return false;
  }
  return true;
}

function signature(info: Stats | undefined): string {
  return info === undefined ? '-' : `${info.dev}:${info.ino}:${info.mode}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
}
