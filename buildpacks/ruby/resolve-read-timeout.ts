import { decide, type Decision } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';

const DEFAULT_READ_TIMEOUT_S = 300;

/** NGINX_READ_TIMEOUT (specification, Limits): seconds nginx waits for the application's response; 300 by default. */
export function resolveReadTimeout(value: string | undefined): { seconds: number; decision: Decision } {
  const set = value?.trim() || undefined;
  if (set !== undefined && (!/^\d+s?$/.test(set) || Number(set.replace(/s$/, '')) < 1 || Number(set.replace(/s$/, '')) > 86_400)) {
    throw RubyErrors.RUBY_NGINX_SETTING_INVALID.create({ message: `NGINX_READ_TIMEOUT=${JSON.stringify(value)} is not a whole number of seconds from 1 to 86400.`, variable: 'NGINX_READ_TIMEOUT' });
  }
  const seconds = set === undefined ? DEFAULT_READ_TIMEOUT_S : Number(set.replace(/s$/, ''));
  return {
    seconds,
    decision: decide({
      id: 'ruby.nginx.read-timeout',
      subject: 'nginx read timeout (proxy_read_timeout)',
      requests: [{ source: set === undefined ? 'default' : 'env NGINX_READ_TIMEOUT', value: value ?? null }],
      resolved: `${seconds}s`,
      reason:
        set === undefined
          ? 'NGINX_READ_TIMEOUT is not set: 300 seconds (specification, Limits); a slower response gets 504'
          : 'NGINX_READ_TIMEOUT sets how long nginx waits for the application; a slower response gets 504',
    }),
  };
}
