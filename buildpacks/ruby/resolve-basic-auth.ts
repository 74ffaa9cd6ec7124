import { decide, type Decision, type FileChunk } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';

const NUMBERED = /^CC_HTTP_BASIC_AUTH_(\d+)$/;

export interface BasicAuth {
  /** The variables holding login:password, in order. */
  readonly variables: readonly string[];
  /** Content of nginx's user file: references only, never the values. */
  readonly userFile: readonly FileChunk[];
  readonly decision: Decision;
}

/**
 * HTTP basic authentication (specification, Authentication): CC_HTTP_BASIC_AUTH
 * and every CC_HTTP_BASIC_AUTH_<n> (n ascending) hold `login:password`. nginx's
 * user file gets one `login:{PLAIN}password` line per variable, written from
 * references when the processes start (mode 0600); the values never enter the plan.
 */
export function resolveBasicAuth(variables: ReadonlyArray<readonly [string, string]>): BasicAuth | undefined {
  const found: Array<{ name: string; n: number }> = [];
  for (const [name, value] of variables) {
    const m = NUMBERED.exec(name);
    if (value === '') continue;
    // A user the specification does not define would be ignored, and the app served without the
    // authentication its owner asked for: refused, not ignored.
    if (!m && name.startsWith('CC_HTTP_BASIC_AUTH_')) {
      throw RubyErrors.RUBY_BASIC_AUTH_NAME_INVALID.create({
        message: `${name} is not a basic-auth variable: after CC_HTTP_BASIC_AUTH_ the specification allows only a number, so this user would be ignored and the application served without it.`,
        variable: name,
      });
    }
    if (name !== 'CC_HTTP_BASIC_AUTH' && !m) continue;
    const colon = value.indexOf(':');
    // Only the shape is described: the value is a secret.
    const problem =
      colon < 0
        ? 'has no ":" between login and password'
        : colon === 0
          ? 'has an empty login'
          : colon === value.length - 1
            ? 'has an empty password'
            : /[\s\x00-\x1f\x7f]/.test(value)
              ? 'contains whitespace or a control character'
              : // nginx's user file ends the password field at a colon.
                value.indexOf(':', colon + 1) >= 0
                ? 'has a ":" in its password, which nginx cannot check'
                : undefined;
    if (problem) throw RubyErrors.RUBY_BASIC_AUTH_INVALID.create({ message: `${name} ${problem}; it must be login:password.`, variable: name });
    found.push({ name, n: m ? Number(m[1]) : -1 });
  }
  if (found.length === 0) return undefined;
  found.sort((a, b) => a.n - b.n);
  const names = found.map((f) => f.name);
  return {
    variables: names,
    userFile: names.flatMap((env): FileChunk[] => [{ env, part: 'before-first-colon' }, { text: ':{PLAIN}' }, { env, part: 'after-first-colon' }, { text: '\n' }]),
    decision: decide({
      id: 'ruby.basic-auth',
      subject: 'HTTP basic authentication',
      requests: [{ source: names.map((n) => `env ${n}`).join(', '), value: names.join(', ') }],
      resolved: `${names.length} user${names.length > 1 ? 's' : ''}`,
      reason: 'nginx asks every request for one of these login:password pairs (401 otherwise); the user file is written with mode 0600 when the processes start and is never printed',
    }),
  };
}
