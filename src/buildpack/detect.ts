import { CoreErrors } from '../errors/core-errors.js';
import type { FileSource } from '../files/file-source.js';
import type { Detection } from '../plan/schema.js';
import type { Buildpack, DetectResult } from './contract.js';
import type { BuildpackRegistry } from './registry.js';

export interface Selection {
  readonly buildpack: Buildpack;
  readonly detection: Detection;
}

/**
 * Chooses the buildpack: the one named by `type`, which must still pass its own
 * detection, or else the highest-priority buildpack whose detection passes.
 */
export async function selectBuildpack(registry: BuildpackRegistry, files: FileSource, type?: string): Promise<Selection> {
  if (type !== undefined) {
    const buildpack = registry.get(type);
    if (!buildpack) {
      throw CoreErrors.DETECT_UNKNOWN_TYPE.create({
        message: `unknown application type "${type}"; registered types: ${registry.ids().join(', ')}.`,
      });
    }
    const result = await buildpack.detector.detect(files);
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
  const results = await Promise.all(buildpacks.map((bp) => bp.detector.detect(files)));
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
