import { RubyErrors } from './errors.js';
import { appRelativePath, isSafeRedirectTarget, isSafeUrlPath, nginxSize } from './nginx-values.js';
import { lineExcerpt, quoteJsonValue } from '../../src/kit/index.js';

export const HTTP_JSON = 'platform/http.json';

/** platform/http.json once checked: every value is safe to write into nginx's configuration. */
export interface HttpSettings {
  /** Language code (or "default") → path prefix served ("" for the root). */
  readonly languages?: { readonly default?: string; readonly codes: ReadonlyArray<{ readonly code: string; readonly prefix: string }> };
  /** Status → file of the application (relative path). */
  readonly errorPages?: ReadonlyArray<{ readonly status: number; readonly file: string }>;
  readonly forceHttps?: boolean;
  /** Exact path → redirect target. */
  readonly aliases?: ReadonlyArray<{ readonly path: string; readonly target: string }>;
  /** nginx charset name. */
  readonly charset?: string;
  /** nginx size ("50m"): the largest request body; NGINX_CLIENT_MAX_BODY_SIZE wins over it. */
  readonly clientMaxBodySize?: string;
}

const FIELDS = ['languages', 'error_pages', 'force_https', 'aliases', 'charset', 'client_max_body_size'];

/** Common spellings of charsets → the names nginx (and browsers) use. */
const CHARSET_NAMES: Readonly<Record<string, string>> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'iso-8859-1': 'iso-8859-1',
  latin1: 'iso-8859-1',
  'latin-1': 'iso-8859-1',
  'iso-8859-15': 'iso-8859-15',
  latin9: 'iso-8859-15',
  'windows-1251': 'windows-1251',
  cp1251: 'windows-1251',
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
  'koi8-r': 'koi8-r',
  'us-ascii': 'us-ascii',
  ascii: 'us-ascii',
  shift_jis: 'shift_jis',
  'euc-jp': 'euc-jp',
  gbk: 'gbk',
  big5: 'big5',
};

export function charsetName(value: string): string | undefined {
  return CHARSET_NAMES[value.trim().toLowerCase()];
}

const LANGUAGE = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})?$/;

function fail(message: string) {
  return RubyErrors.RUBY_HTTP_JSON_INVALID.create({ message: `${HTTP_JSON}: ${message}`, file: HTTP_JSON });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Parses and checks platform/http.json. `fileExists` tells whether an error page
 * file exists in the application. Unknown fields are refused (a misspelt field
 * would otherwise silently do nothing).
 */
export async function parseHttpJson(text: string, fileExists: (path: string) => Promise<boolean>): Promise<HttpSettings> {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw fail(`not valid JSON (${lineExcerpt((error as Error).message, 200)}).`);
  }
  if (!isObject(raw)) throw fail('must hold a JSON object.');
  const unknown = Object.keys(raw).filter((k) => !FIELDS.includes(k));
  if (unknown.length > 0)
    throw fail(
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown
        .slice(0, 5)
        .map((k) => quoteJsonValue(k))
        .join(', ')}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}; the fields are ${FIELDS.join(', ')}.`,
    );
  const out: { -readonly [K in keyof HttpSettings]: HttpSettings[K] } = {};

  if (raw.force_https !== undefined) {
    if (typeof raw.force_https !== 'boolean') throw fail(`force_https must be true or false, not ${quoteJsonValue(raw.force_https)}.`);
    out.forceHttps = raw.force_https;
  }

  if (raw.charset !== undefined) {
    const name = typeof raw.charset === 'string' ? charsetName(raw.charset) : undefined;
    if (name === undefined) throw fail(`charset ${quoteJsonValue(raw.charset)} is not one of ${[...new Set(Object.values(CHARSET_NAMES))].join(', ')} (or a usual spelling of one).`);
    out.charset = name;
  }

  if (raw.client_max_body_size !== undefined) {
    const size = typeof raw.client_max_body_size === 'string' ? nginxSize(raw.client_max_body_size) : undefined;
    if (size === undefined) throw fail(`client_max_body_size must be a size such as "100m", "512k" or "1g" ("0" lifts the limit), not ${quoteJsonValue(raw.client_max_body_size)}.`);
    out.clientMaxBodySize = size;
  }

  if (raw.aliases !== undefined) {
    if (!isObject(raw.aliases)) throw fail('aliases must be an object mapping a path to a redirection target.');
    out.aliases = Object.entries(raw.aliases).map(([path, target]) => {
      if (!isSafeUrlPath(path)) throw fail(`aliases key ${quoteJsonValue(path)} is not a URL path such as "/old-page" (letters, digits, "-", "_", ".", "~", "%", "/").`);
      if (typeof target !== 'string' || !isSafeRedirectTarget(target))
        throw fail(`aliases["${path}"] must be a path such as "/new-page" or an http(s) URL without spaces, quotes, ";", "{", "}" or "$"; got ${quoteJsonValue(target)}.`);
      return { path, target };
    });
  }

  if (raw.error_pages !== undefined) {
    if (!isObject(raw.error_pages)) throw fail('error_pages must be an object mapping a status such as "404" to a file.');
    const pages: Array<{ status: number; file: string }> = [];
    for (const [status, path] of Object.entries(raw.error_pages)) {
      if (!/^[45]\d\d$/.test(status)) throw fail(`error_pages key ${quoteJsonValue(status)} is not an HTTP error status from 400 to 599.`);
      const file = typeof path === 'string' ? appRelativePath(path) : undefined;
      if (!file) throw fail(`error_pages["${status}"] must be the path of a file of the application such as "/errors/404.html"; got ${quoteJsonValue(path)}.`);
      if (!(await fileExists(file))) throw fail(`error_pages["${status}"] names ${file}, which does not exist in the application.`);
      // nginx refuses `error_page 499` (its own code for a client that closed the connection): the build's nginx -t would fail.
      if (status === '499') throw fail('error_pages key "499" is the status nginx reserves for a client that closed the connection; it cannot have an error page.');
      pages.push({ status: Number(status), file });
    }
    out.errorPages = pages;
  }

  if (raw.languages !== undefined) {
    if (!isObject(raw.languages)) throw fail('languages must be an object such as {"default": {"rewrite": "/en"}, "fr": {"rewrite": "/fr"}}.');
    let fallback: string | undefined;
    const codes: Array<{ code: string; prefix: string }> = [];
    for (const [code, entry] of Object.entries(raw.languages)) {
      if (code !== 'default' && !LANGUAGE.test(code)) throw fail(`languages key ${quoteJsonValue(code)} is not "default" or a language code such as "fr" or "pt-br".`);
      const rewrite = isObject(entry) ? entry.rewrite : undefined;
      if (typeof rewrite !== 'string' || !isSafeUrlPath(rewrite)) throw fail(`languages["${code}"].rewrite must be a path prefix such as "/fr"; got ${quoteJsonValue(rewrite)}.`);
      const prefix = rewrite.replace(/\/+$/, '');
      if (code === 'default') fallback = prefix;
      else codes.push({ code, prefix });
    }
    out.languages = { ...(fallback === undefined ? {} : { default: fallback }), codes };
  }
  return out;
}
