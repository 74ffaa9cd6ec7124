import { decide, type Decision } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';
import { HTTP_JSON } from './http-json.js';
import { nginxSize } from './nginx-values.js';

/**
 * The default limit of a request's body: nginx's own (1 MiB) refuses an ordinary
 * photo with 413 before Rails sees it, which breaks every upload form (Active
 * Storage's recipe among them). 100 MiB takes photos, documents and short videos;
 * larger files are better sent straight to the object storage (direct uploads).
 */
export const DEFAULT_CLIENT_MAX_BODY_SIZE = '100m';

/**
 * nginx's client_max_body_size: NGINX_CLIENT_MAX_BODY_SIZE, else
 * platform/http.json's client_max_body_size, else DEFAULT_CLIENT_MAX_BODY_SIZE.
 * A larger request gets 413 from nginx.
 */
export function resolveClientMaxBodySize(variable: string | undefined, fromHttpJson: string | undefined): { size: string; decision: Decision } {
  const set = variable?.trim() || undefined;
  const size = set === undefined ? undefined : nginxSize(set);
  if (set !== undefined && size === undefined) {
    throw RubyErrors.RUBY_NGINX_SETTING_INVALID.create({
      message: `NGINX_CLIENT_MAX_BODY_SIZE=${JSON.stringify(variable)} is not a size such as 100m, 512k or 1g (0 lifts the limit).`,
      variable: 'NGINX_CLIENT_MAX_BODY_SIZE',
    });
  }
  const resolved = size ?? fromHttpJson ?? DEFAULT_CLIENT_MAX_BODY_SIZE;
  return {
    size: resolved,
    decision: decide({
      id: 'ruby.nginx.client-max-body-size',
      subject: 'largest request body (nginx client_max_body_size)',
      requests: [
        { source: 'env NGINX_CLIENT_MAX_BODY_SIZE', value: set === undefined ? undefined : (variable ?? null) },
        { source: `${HTTP_JSON} client_max_body_size`, value: fromHttpJson },
      ],
      resolved: resolved === '0' ? '0 (no limit)' : resolved,
      reason: (winner) =>
        `${winner === undefined ? "neither NGINX_CLIENT_MAX_BODY_SIZE nor platform/http.json sets it: 100 MiB, for file uploads (nginx's own 1 MiB refuses an ordinary photo)" : `${winner.source.replace(/^env /, '')} sets the largest request body nginx passes to the application`}; a larger request gets 413 Request Entity Too Large`,
    }),
  };
}
