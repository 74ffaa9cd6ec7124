import { CoreErrors } from '../errors/core-errors.js';
import { listIssues } from '../errors/issues.js';
import type { FileSource } from '../files/file-source.js';
import { buildpackLimits } from '../host/host-settings.js';
import { quickSafeParse } from '../plan/quick-parse.js';
import type { Detection } from '../plan/schema.js';
import { type CallLimit, callBuildpack } from './call-buildpack.js';
import { DetectResultSchema } from './contribution-schema.js';
import type { Buildpack, DetectResult } from './contract.js';
import type { BuildpackRegistry } from './registry.js';

export interface Selection {
  readonly buildpack: Buildpack;
  readonly detection: Detection;
}

/**
 * Chooses the buildpack: the one named by `type`, which must still pass its own
 * detection, or else the highest-priority buildpack whose detection passes.
 * Each detector is called within `limit` (default: the host's buildpack timeout).
 */
export async function selectBuildpack(registry: BuildpackRegistry, files: FileSource, type?: string, limit: CallLimit = { timeoutMs: buildpackLimits().buildpackTimeoutMs }): Promise<Selection> {
  if (type !== undefined) {
    const buildpack = registry.get(type);
    if (!buildpack) {
      throw CoreErrors.DETECT_UNKNOWN_TYPE.create({
        message: `unknown application type "${type}"; registered types: ${registry.ids().join(', ')}.`,
      });
    }
    const result = await detect(buildpack, files, limit);
    if (result.status === 'error' && result.error) throw result.error;
    if (result.status === 'skip') {
      throw CoreErrors.DETECT_REJECTED.create({
        message: `--type ${type} was requested but ${result.evidence.join('; ')}.`,
      });
    }
    return {
      buildpack,
      detection: {
        selectedBy: 'option',
        evidence: [`--type ${type}`, ...result.evidence],
        candidates: [{ buildpack: type, status: result.status, evidence: [...result.evidence] }],
      },
    };
  }

  const candidates: Detection['candidates'] = [];
  let chosen: Buildpack | undefined;
  let chosenEvidence: readonly string[] = [];
  // Detectors only read files: ask them all at once, then weigh the answers in priority order.
  const buildpacks = registry.list();
  const results = await Promise.all(buildpacks.map((bp) => detect(bp, files, limit)));
  for (const [i, buildpack] of buildpacks.entries()) {
    const result = results[i] as DetectResult;
    candidates.push({ buildpack: buildpack.id, status: result.status, evidence: [...result.evidence] });
    // A buildpack that recognises the app but finds it broken stops detection: its error is the useful one.
    if (result.status === 'error' && chosen === undefined) {
      if (result.error) throw result.error;
    }
    if (result.status === 'pass' && chosen === undefined) {
      chosen = buildpack;
      chosenEvidence = result.evidence;
    }
  }
  if (!chosen) {
    throw CoreErrors.DETECT_NO_MATCH.create({
      message: `no buildpack recognises ${files.label}: ${candidates.map((c) => `${c.buildpack}: ${c.evidence.join(', ')}`).join('; ')}.`,
      // From the registry, so that a host's buildpacks are named too.
      fix: `Add the files one of the registered buildpacks (${registry.ids().join(', ')}) looks for — each says above what it missed — or pass --type.`,
    });
  }
  return { buildpack: chosen, detection: { selectedBy: 'detection', evidence: [...chosenEvidence], candidates } };
}

/** One buildpack's detection, bounded in time and checked against the contract. */
async function detect(buildpack: Buildpack, files: FileSource, limit: CallLimit): Promise<DetectResult> {
  const result = await callBuildpack(buildpack.id, 'detect', limit, () => buildpack.detector.detect(files));
  // Each buildpack's result once per plan: Zod's compiled fast path would cost a CLI run more than it saves (quick-parse.ts).
  const parsed = quickSafeParse(DetectResultSchema, result);
  if (!parsed.success) {
    throw CoreErrors.BUILDPACK_RESULT_INVALID.create({
      message: `buildpack "${buildpack.id}" returned from detect() something that is not a detection result ({ status: "pass" | "skip" | "error", evidence: [...] }): ${listIssues(parsed.error.issues)}.`,
      details: { buildpack: buildpack.id, phase: 'detect' },
    });
  }
  return parsed.data;
}
