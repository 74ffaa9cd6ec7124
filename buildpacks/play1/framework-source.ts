import { Play1Errors } from './errors.js';
import type { FrameworkRelease } from './framework-cache.js';
import { downloadUrl, validateTemplate } from './mirror.js';
import { HOST_VARIABLES, type HostConfiguration } from './options.js';
import type { Play1Series } from './versions.js';

/**
 * Where the release comes from and what it must hash to. A release without a
 * known checksum is refused: runplan never runs a framework it cannot verify.
 */
export function frameworkSource(config: HostConfiguration, series: Play1Series): FrameworkRelease {
  if (!config.mirror) {
    throw Play1Errors.PLAY1_MIRROR_UNSET.create({
      message: `Play ${series.release} must be downloaded, but no mirror is configured (${HOST_VARIABLES.mirror} or the mirror option).`,
      variable: HOST_VARIABLES.mirror,
    });
  }
  const template = validateTemplate(config.mirror);
  const table = config.checksums();
  const sha256 = table.get(series.release);
  if (!sha256) {
    const known = [...table.keys()];
    throw Play1Errors.PLAY1_CHECKSUM_UNKNOWN.create({
      message: `no SHA-256 is known for Play ${series.release} (${config.checksumsOrigin}${known.length > 0 ? ` lists ${known.join(', ')}` : ' is empty'}), so it will not be downloaded.`,
      variable: HOST_VARIABLES.checksums,
    });
  }
  return { version: series.release, url: downloadUrl(template, series.release, series.series), sha256 };
}
