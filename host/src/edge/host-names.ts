/**
 * A DNS host name as RFC 1123 has them, in lower case: labels of letters, digits and `-` (not first nor last),
 * 63 characters at most, joined by dots. The edge's route of custom domains takes only such a Host, so no
 * Host header names a path outside the domains' folder (no `..`, no `/`).
 */
const LABEL_SYNTAX = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
export const HOST_NAME_SYNTAX = `${LABEL_SYNTAX}(?:\\.${LABEL_SYNTAX})*`;
const HOST_NAME = new RegExp(`^${HOST_NAME_SYNTAX}$`);

/** Whether `name` is a lower-case RFC 1123 host name of two labels at least (a custom domain is never a bare word), 253 characters at most. */
export function isDnsHostName(name: string): boolean {
  return name.length <= 253 && name.includes('.') && HOST_NAME.test(name);
}
