import { Play1Errors } from './errors.js';

/**
 * Where Play distributions are downloaded from: a URL template and a table of
 * SHA-256 checksums by release. Both are host configuration; runplan ships
 * neither a mirror address nor checksums (docs/buildpacks/play1.md explains how
 * to fill them from the official distribution).
 */
export interface MirrorSetting {
  readonly template: string;
  /** Where the template came from, for messages: "RUNPLAN_PLAY1_MIRROR" or "option mirror". */
  readonly origin: string;
}

const PLACEHOLDER = /\{(version|series)\}/g;

/** Checks a URL template: http, https or file; contains {version}; carries no credentials. */
export function validateTemplate(setting: MirrorSetting): string {
  const { template, origin } = setting;
  const fail = (why: string) => Play1Errors.PLAY1_MIRROR_INVALID.create({ message: `${origin} ${JSON.stringify(template)} ${why}.`, variable: origin });
  if (!template.includes('{version}')) throw fail('does not contain {version}, so every release would be fetched from the same address');
  const unknown = /\{([^}]*)\}/.exec(template.replace(PLACEHOLDER, ''));
  if (unknown) throw fail(`contains the unknown placeholder {${unknown[1]}} (only {version} and {series} exist)`);
  let url: URL;
  try {
    url = new URL(template.replace(PLACEHOLDER, 'x'));
  } catch {
    throw fail('is not an absolute URL');
  }
  if (!['http:', 'https:', 'file:'].includes(url.protocol)) throw fail(`uses ${url.protocol}, not http:, https: or file:`);
  // The URL is written into plans and logs; a password in it would leak there.
  if (url.username !== '' || url.password !== '') throw fail('contains a user name or password; serve the mirror without credentials in the URL');
  return template;
}

/** The download address of one release. */
export function downloadUrl(template: string, release: string, series: string): string {
  return template.replace(PLACEHOLDER, (_, name: string) => encodeURIComponent(name === 'version' ? release : series));
}

/**
 * Parses a checksum table written as `VERSION=SHA256` pairs separated by commas,
 * blanks or newlines (`#` starts a comment line).
 */
export function parseChecksums(text: string, origin: string): Map<string, string> {
  const table = new Map<string, string>();
  const body = text
    .split('\n')
    .filter((line) => !line.trim().startsWith('#'))
    .join('\n');
  for (const pair of body.split(/[\s,]+/).filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw invalidTable(origin, `"${pair}" is not VERSION=SHA256`);
    const version = pair.slice(0, eq);
    table.set(version, checksum(pair.slice(eq + 1), origin, version));
  }
  return table;
}

/** A lower-case SHA-256, or RUNPLAN_E_PLAY1_CHECKSUMS_INVALID. */
export function checksum(value: string, origin: string, version: string): string {
  const hex = value.trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw invalidTable(origin, `the checksum of ${version} is not 64 hexadecimal digits`);
  return hex;
}

function invalidTable(origin: string, why: string) {
  return Play1Errors.PLAY1_CHECKSUMS_INVALID.create({ message: `${origin}: ${why}.`, variable: origin });
}
