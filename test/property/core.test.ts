/**
 * Properties of the core parsers (issue 11): variable assignments and env files,
 * environment assembly and redaction, health-check paths, the plan schema and
 * its placeholders, private SSH keys and known hosts return a valid result or
 * throw a coded RunplanError, and keep secret values out of what they return.
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import dotenv from 'dotenv';
import { assembleEnvironment, ENV_PRECEDENCE } from '../../src/env/assemble.js';
import { parseAssignment, parseEnvFile } from '../../src/env/assignments.js';
import { isValidVariableName } from '../../src/env/names.js';
import { Redactor } from '../../src/env/secrets.js';
import { healthPathsFromEnv } from '../../src/health/health-paths.js';
import { fillPlaceholders, textChunks } from '../../src/plan/placeholders.js';
import { PLACEHOLDERS, type RunPlan } from '../../src/plan/schema.js';
import { parsePlan } from '../../src/planning/create-plan.js';
import { parseKnownHosts } from '../../src/env/known-hosts.js';
import { parsePrivateKey } from '../../src/env/ssh-key.js';
import { remotePattern, sshRemote } from '../../src/planning/ssh-remote.js';
import { anyJson, codedOr, hostileString, isCoded, nearly, RUNS } from './arbitraries.js';

const NAMES = ['NPM_TOKEN', 'DATABASE_URL', 'PORT', 'CC_NODE_VERSION', 'SECRET_KEY_BASE', 'A', '_x1', 'CC_HTTP_BASIC_AUTH', 'MY_API_KEY'];
const name = nearly(fc.constantFrom(...NAMES));
const value = fc.oneof(hostileString, fc.constantFrom('postgres://u:p4ssw0rd@db.example/x', 's3cr3t-value', ''));

describe('variable assignments', () => {
  it('NAME=VALUE parses to a valid name and exactly the text after the first "=", or a coded error', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.tuple(name, value).map(([n, v]) => `${n}=${v}`),
          hostileString,
        ),
        (text) => {
          const a = codedOr(() => parseAssignment(text, '--env'));
          if (a === undefined) return;
          expect(isValidVariableName(a.name)).toBe(true);
          expect(`${a.name}=${a.value}`).toBe(text);
        },
      ),
      { numRuns: RUNS.pure },
    );
  });

  // Issue 11, finding 6: a malformed --env (no "=") is echoed, so `--env 'NPM_TOKEN tok…'` prints the
  // token. Fixed on the secrets/CLI branch; enable after merging it.
  describe('never echoes a value (finding 6)', () => {
    it('a refused assignment shows none of its text after the name', () => {
      fc.assert(
        fc.property(fc.constantFrom(...NAMES), fc.constantFrom(' ', ':', '\t'), fc.string({ unit: fc.constantFrom(...'abcXYZ0189'), minLength: 8, maxLength: 40 }), (n, sep, secret) => {
          try {
            parseAssignment(`${n}${sep}${secret}`, '--env');
          } catch (error) {
            expect((error as Error).message).not.toContain(secret);
          }
        }),
        { numRuns: RUNS.pure },
      );
    });
  });

  /**
   * A value as a user of dotenv writes it: in single quotes or backquotes (literal,
   * may span lines) when it holds no such quote, else in double quotes, where a line
   * break is written \n or \r (dotenv's only escapes there). Undefined when
   * dotenv's format cannot hold it (a CR, or "\n" as text, with every kind of quote; a "\" last).
   */
  const quoted = (v: string): string | undefined => {
    // A "\" last would escape the closing quote.
    if (v.endsWith('\\')) return undefined;
    if (!v.includes('\r')) for (const q of ["'", '`']) if (!v.includes(q)) return `${q}${v}${q}`;
    if (v.includes('"') || /\\[nr]/.test(v)) return undefined;
    return `"${v.replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;
  };

  it('an env file of quoted values parses back to exactly its variables, as dotenv reads it', () => {
    const fileValue = fc.string({
      unit: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('a', 'Z', '0', ' ', '=', '#', "'", '€') }, fc.constantFrom('"', '`', '\\', '$', '\n', '\r', '\t', '${X}')),
      maxLength: 16,
    });
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fileValue), { selector: ([n]) => n, maxLength: 6 }), fc.constantFrom('\n', '\r\n'), (pairs, eol) => {
        fc.pre(pairs.every(([, v]) => quoted(v) !== undefined));
        const text = pairs.map(([n, v], i) => `${i % 2 ? 'export ' : ''}${n}=${quoted(v)}${eol}`).join(`# comment${eol}`);
        expect(parseEnvFile(text, 'app.env').map((a) => [a.name, a.value])).toEqual(pairs);
        expect(dotenv.parse(text)).toEqual(Object.fromEntries(pairs));
      }),
      { numRuns: RUNS.pure },
    );
  });

  it("an env file runplan accepts gives exactly dotenv's variables", () => {
    const piece = fc.constantFrom('"', "'", '`', '\\', '#', ' ', '=', '\n', '\r', 'export ', 'A', 'NPM_TOKEN', 'x y', ': ', '\\"', '\\n');
    const line = fc.oneof(
      fc.tuple(fc.constantFrom(...NAMES), fc.array(piece, { maxLength: 8 })).map(([n, ps]) => `${n}=${ps.join('')}`),
      fc.array(piece, { maxLength: 8 }).map((ps) => ps.join('')),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 6 }), (lines) => {
        const text = lines.join('\n');
        const list = codedOr(() => parseEnvFile(text, 'app.env'));
        if (list === undefined) return;
        expect(Object.fromEntries(list.map((a) => [a.name, a.value]))).toEqual(dotenv.parse(text));
      }),
      { numRuns: RUNS.pure },
    );
  });

  it('any env file parses to valid names, or a coded error', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.tuple(name, value).map(([n, v]) => `${n}=${v}`),
            hostileString,
          ),
          { maxLength: 6 },
        ),
        (lines) => {
          const list = codedOr(() => parseEnvFile(lines.join('\n'), 'app.env'));
          for (const a of list ?? []) expect(isValidVariableName(a.name)).toBe(true);
        },
      ),
      { numRuns: RUNS.pure },
    );
  });
});

describe('environment assembly and redaction', () => {
  const set = fc.dictionary(name, value, { maxKeys: 5 });
  it('the strongest set wins, and the plan view never holds a secret value', () => {
    fc.assert(
      fc.property(set, fc.array(fc.record({ name: fc.constantFrom('redis', 'pg'), variables: set }), { maxLength: 2 }), set, (application, links, service) => {
        const env = codedOr(() => assembleEnvironment({ application, links, service }));
        if (env === undefined) return;
        for (const e of env.list()) {
          const expected = e.name in service ? service[e.name] : e.name in application ? application[e.name] : [...links].reverse().find((l) => e.name in l.variables)?.variables[e.name];
          expect(e.value).toBe(expected);
          expect(ENV_PRECEDENCE).toContain(e.source);
        }
        const plan = env.toPlan();
        for (const v of plan.variables) if (v.secret) expect(v).not.toHaveProperty('value');
        const text = JSON.stringify(plan);
        // (Unless the same text is also the value of a variable that is not secret, which the plan shows.)
        const shown = env
          .list()
          .filter((e) => !e.secret)
          .map((e) => e.value);
        for (const e of env.list()) if (e.secret && e.value.length >= 8 && !shown.some((v) => v.includes(e.value))) expect(text).not.toContain(e.value);
      }),
      { numRuns: RUNS.pure },
    );
  });

  // No "*": the marker *** next to a dot would spell a secret like "..*" again without leaking it.
  const secret = fc.string({ unit: fc.oneof(fc.constantFrom(...'abcXYZ0189+/=-_'), fc.constantFrom('.', '?', '(', '[', '\\', '$', '\n', '日')), minLength: 3, maxLength: 200 });
  it('redaction removes every registered secret from any text around it', () => {
    fc.assert(
      fc.property(fc.array(secret, { minLength: 1, maxLength: 3 }), fc.array(hostileString, { minLength: 1, maxLength: 4 }), (secrets, around) => {
        const r = new Redactor();
        for (const s of secrets) r.addSecret(s);
        const text = around.join(secrets.join(' '));
        const out = r.redact(text);
        // A secret may overlap another: what matters is that none is left whole.
        for (const s of secrets) expect(out).not.toContain(s);
      }),
      { numRuns: RUNS.pure },
    );
  });

  // Issue 11, finding 6: a secret of about 25 KB or more (an SSH key) crashes the redactor with
  // "Invalid regular expression … too large", and the error prints the secret. Fixed on the
  // secrets/CLI branch; enable after merging it.
  describe('secrets of any size (finding 6)', () => {
    it('redaction removes a secret of up to 100 KB, or fails with a code', () => {
      fc.assert(
        fc.property(fc.integer({ min: 3, max: 100_000 }), fc.string({ minLength: 1, maxLength: 4 }), (length, unit) => {
          const s = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
          const r = new Redactor();
          r.addSecret(s);
          const out = codedOr(() => r.redact(`before ${s} after`));
          if (out !== undefined) expect(out).not.toContain(s);
        }),
        { numRuns: runsForLargeSecrets },
      );
    });
  });
});
const runsForLargeSecrets = Math.max(5, Math.round(RUNS.pure / 20));

describe('health-check paths', () => {
  const path = nearly(fc.constantFrom('/', '/health', '/status/ready', '/x?y=1'));
  const healthName = fc.oneof(
    fc.constant('CC_HEALTH_CHECK_PATH'),
    fc.nat(20).map((n) => `CC_HEALTH_CHECK_PATH_${n}`),
    fc.constant('OTHER'),
  );
  it('every configured path is a single-slash URL path without spaces or control characters, or a coded error', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(healthName, path), { selector: ([n]) => n, maxLength: 5 }), (pairs) => {
        const paths = codedOr(() => healthPathsFromEnv(pairs));
        if (paths === undefined) return;
        for (const p of paths) expect(p.path).toMatch(/^\/(?!\/)[^\s\x00-\x1f\x7f]*$/);
        const numbers = paths.map((p) => /_(\d+)$/.exec(p.source)?.[1]).filter((n) => n !== undefined);
        expect(numbers.map(Number)).toEqual([...numbers.map(Number)].sort((a, b) => a - b));
      }),
      { numRuns: RUNS.pure },
    );
  });

  // Issue 11, finding 8: CC_HEALTH_CHECK_PATH_abc is ignored, so a check the user asked for never runs.
  // Fixed on the secrets/CLI branch; enable after merging it.
  describe('fails closed (finding 8)', () => {
    it('every non-empty CC_HEALTH_CHECK_PATH* variable is checked or refused with a code', () => {
      const anyName = fc.string({ unit: fc.constantFrom('a', 'Z', '_', '1'), minLength: 1, maxLength: 4 }).map((s) => `CC_HEALTH_CHECK_PATH_${s}`);
      fc.assert(
        fc.property(anyName, (n) => {
          const paths = codedOr(() => healthPathsFromEnv([[n, '/health']]));
          if (paths !== undefined) expect(paths.map((p) => p.source)).toContain(n);
        }),
        { numRuns: RUNS.pure },
      );
    });
  });
});

describe('plan documents and placeholders', () => {
  it('text cut into chunks at placeholders joins back to the same text', () => {
    const text = fc.array(fc.oneof(hostileString, fc.constantFrom(...PLACEHOLDERS.map((p) => `\${${p}}`), '${HOME}', '${APP_HOME', '$${RUN_DIR}')), { maxLength: 6 }).map((p) => p.join(''));
    fc.assert(
      fc.property(text, (t) => {
        const joined = textChunks(t)
          .map((c) => ('text' in c ? c.text : `\${${c.placeholder}}`))
          .join('');
        expect(joined).toBe(t);
        const filled = fillPlaceholders(t, { APP_HOME: '/srv/app', RUN_DIR: '/run/x', RUBY_BIN: '/opt/ruby/bin', NGINX_BIN: '/usr/sbin' });
        expect(filled).not.toMatch(new RegExp(`\\$\\{(${PLACEHOLDERS.join('|')})\\}`));
      }),
      { numRuns: RUNS.pure },
    );
  });

  // Every golden plan, each changed at one place to any JSON value (a wrong type, a hostile string).
  const golden: RunPlan[] = ['node', 'ruby', 'play1'].flatMap((type) => {
    const dir = new URL(`../golden/${type}/`, import.meta.url);
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as { plan?: RunPlan })
      .flatMap((g) => (g.plan ? [g.plan] : 'schemaVersion' in g ? [g as unknown as RunPlan] : []));
  });

  function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
    if (Array.isArray(value)) return [at, ...value.flatMap((v, i) => paths(v, [...at, i]))];
    if (value !== null && typeof value === 'object') return [at, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...at, k]))];
    return [at];
  }

  it('a saved plan changed anywhere is read as a plan, or refused with a code', () => {
    expect(golden.length).toBeGreaterThan(50);
    fc.assert(
      fc.property(fc.constantFrom(...golden), fc.nat(), anyJson, (plan, pick, replacement) => {
        const copy = structuredClone(plan) as unknown as Record<string, unknown>;
        const all = paths(copy).filter((p) => p.length > 0);
        const path = all[pick % all.length] as (string | number)[];
        let parent: Record<string | number, unknown> = copy;
        for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
        parent[path[path.length - 1] as string | number] = replacement;
        const parsed = codedOr(() => parsePlan(JSON.parse(JSON.stringify(copy)), 'plan.json'));
        if (parsed !== undefined) expect(parsed.schemaVersion).toBe(plan.schemaVersion);
      }),
      { numRuns: RUNS.pure },
    );
  });
});

describe('private SSH keys, known hosts and git remotes', () => {
  const field = (value: string | Buffer) => {
    const bytes = Buffer.from(value);
    return Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
  };
  const publicKey = Buffer.concat([field('ssh-ed25519'), field(Buffer.alloc(32, 5))]);
  const blob = Buffer.concat([Buffer.from('openssh-key-v1\0', 'latin1'), field('none'), field('none'), field(''), Buffer.from([0, 0, 0, 1]), field(publicKey), field(Buffer.alloc(40, 9))]);
  const wrap = (label: string, data: Buffer) => `-----BEGIN ${label}-----\n${(data.toString('base64').match(/.{1,70}/g) ?? []).join('\n')}\n-----END ${label}-----\n`;
  const keyText = fc.constantFrom(
    wrap('OPENSSH PRIVATE KEY', blob),
    wrap('RSA PRIVATE KEY', Buffer.alloc(120, 3)),
    wrap('OPENSSH PRIVATE KEY', Buffer.concat([blob.subarray(0, 20), Buffer.from('aes256-ctr')])),
  );

  it('a key value is read as a key, or refused with RUNPLAN_E_SSH_KEY_INVALID that quotes none of its lines', () => {
    fc.assert(
      fc.property(nearly(keyText), (value) => {
        try {
          const key = parsePrivateKey(value);
          expect(key.text).toMatch(/^-----BEGIN [A-Z ]+-----\n[A-Za-z0-9+/=\n]+\n-----END [A-Z ]+-----\n$/);
        } catch (error) {
          expect(isCoded(error) && error.code, String(error)).toBe('RUNPLAN_E_SSH_KEY_INVALID');
          const text = `${(error as Error).message}\n${(error as { fix?: string }).fix ?? ''}`;
          for (const line of value.split(/\r?\n/)) if (line.trim().length >= 8 && !line.includes('-----')) expect(text).not.toContain(line.trim());
        }
      }),
      { numRuns: RUNS.pure },
    );
  });

  it('known_hosts text gives entries that are lines of it, and never throws', () => {
    const line = fc.constantFrom(`[127.0.0.1]:2222 ssh-ed25519 ${publicKey.toString('base64')}`, `@cert-authority *.example.org ssh-ed25519 ${publicKey.toString('base64')}`, '# comment');
    fc.assert(
      fc.property(fc.array(nearly(line), { maxLength: 4 }), (lines) => {
        const text = lines.join('\n');
        const { entries, invalid } = parseKnownHosts(text);
        for (const e of entries) expect(text.split(/\r?\n/).map((l) => l.trim())).toContain(e.line);
        for (const i of invalid) expect(i.line).toBeGreaterThan(0);
      }),
      { numRuns: RUNS.pure },
    );
  });

  it('a git remote over SSH has a host and a path of printable characters, and a pattern that matches its own URL', () => {
    const url = fc.constantFrom('git+ssh://git@git.example.org:2222/team/repo.git', 'git@github.com:team/repo.git', 'ssh://h/r', 'git+ssh://git@h:team/r.git#v1');
    fc.assert(
      fc.property(nearly(url), (text) => {
        const remote = sshRemote(text);
        if (remote === undefined) return;
        expect(remote.host).toMatch(/^[\x21-\x7e]+$/);
        expect(remote.path).toMatch(/^[\x21-\x7e]+$/);
        expect(new RegExp(remotePattern(remote), 'i').test(text.trim())).toBe(true);
      }),
      { numRuns: RUNS.pure },
    );
  });
});
