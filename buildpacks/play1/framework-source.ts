import { Play1Errors } from './errors.js';
import { downloadUrl, validateTemplate } from './mirror.js';
import { HOST_VARIABLES, type Play1InventoryData } from './options.js';
import type { Play1Series } from './versions.js';

/** One release to install: where it comes from and what its archive must hash to. */
export interface FrameworkRelease {
  readonly version: string;
  readonly url: string;
  readonly sha256: string;
}

/**
 * Where the release comes from and what it must hash to. A release without a
 * known checksum is refused: runplan never runs a framework it cannot verify.
 */
export function frameworkSource(inventory: Play1InventoryData, series: Play1Series): FrameworkRelease {
  if (!inventory.mirror) {
    throw Play1Errors.PLAY1_MIRROR_UNSET.create({
      message: `Play ${series.release} must be downloaded, but no mirror is configured (${HOST_VARIABLES.mirror} or the mirror option).`,
      variable: HOST_VARIABLES.mirror,
    });
  }
  const template = validateTemplate(inventory.mirror);
  const sha256 = inventory.checksums[series.release];
  if (!sha256) {
    const known = Object.keys(inventory.checksums);
    throw Play1Errors.PLAY1_CHECKSUM_UNKNOWN.create({
      message: `no SHA-256 is known for Play ${series.release} (${inventory.checksumsOrigin}${known.length > 0 ? ` lists ${known.join(', ')}` : ' is empty'}), so it will not be downloaded.`,
      variable: HOST_VARIABLES.checksums,
    });
  }
  return { version: series.release, url: downloadUrl(template, series.release, series.series), sha256 };
}
