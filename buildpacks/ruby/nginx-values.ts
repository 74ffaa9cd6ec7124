/**
 * What may reach nginx's configuration from a variable or from http.json. Every
 * value is checked against a narrow character set before it is written, and
 * written inside double quotes: a quote, backslash, semicolon, brace, "$"
 * (variables), "#" (comments), whitespace or a control character could otherwise
 * end a directive and start another.
 */

import { quoteExcerpt } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';

const URL_PATH = /^\/[A-Za-z0-9._~\-/%]*$/;
const REDIRECT_TARGET = /^(?:\/[A-Za-z0-9._~\-/%?=&+,@!*:]*|https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?(?:\/[A-Za-z0-9._~\-/%?=&+,@!*:]*)?)$/;
const RELATIVE_FILE = /^[A-Za-z0-9._\-/]+$/;

/** A URL path such as "/static/"; no "..", no "//". */
export function isSafeUrlPath(value: string): boolean {
  return URL_PATH.test(value) && !value.includes('//') && !value.split('/').includes('..') && !/%(?![0-9A-Fa-f]{2})/.test(value);
}

/** A redirect target: a URL path, or an http(s) URL. */
export function isSafeRedirectTarget(value: string): boolean {
  return REDIRECT_TARGET.test(value) && !value.replace(/^https?:\/\//, '').includes('//') && !value.split('/').includes('..');
}

/**
 * A path inside the application given from its root ("/public/", "public",
 * "errors/404.html"): normalised to "public" / "errors/404.html"; undefined when
 * it would leave the application or holds other characters.
 */
export function appRelativePath(value: string): string | undefined {
  const trimmed = value.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed === '' || !RELATIVE_FILE.test(trimmed)) return trimmed === '' ? '' : undefined;
  const parts = trimmed.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) return undefined;
  return parts.join('/');
}

/** nginx's size syntax: a number of bytes, or of k, m or g; 0 lifts the limit. */
const SIZE = /^(\d{1,6})([kmg]?)$/i;

/** A size as nginx reads it, lower-cased ("50M" → "50m"); undefined when it is not one. */
export function nginxSize(value: string): string | undefined {
  const m = SIZE.exec(value.trim());
  return m ? `${Number(m[1])}${(m[2] ?? '').toLowerCase()}` : undefined;
}

/** Writes a checked value as an nginx string. */
export function quote(value: string): string {
  if (/["\\$\s;{}#]/.test(value) || /[\x00-\x1f\x7f]/.test(value)) {
    throw RubyErrors.RUBY_NGINX_SETTING_INVALID.create({
      message: `refusing to write ${quoteExcerpt(value)} into the nginx configuration (quotes, "$", "\\", ";", braces, "#", spaces and control characters are not allowed there).`,
    });
  }
  return `"${value}"`;
}

/** A regular expression matching `value` literally, for map/location patterns. */
export function escapeRegex(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
