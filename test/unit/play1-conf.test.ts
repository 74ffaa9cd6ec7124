import { describe, expect, it } from 'vitest';
import { analyseConf } from '../../buildpacks/play1/analyse-conf.js';
import { applyFrameworkId, classifyReferences, readApplicationConf, references } from '../../buildpacks/play1/application-conf.js';
import { parseProperties } from '../../buildpacks/play1/properties.js';

const entries = (text: string) => parseProperties(text).entries.map(({ key, value }) => [key, value]);

describe('application.conf as java.util.Properties reads it', () => {
  it.each([
    ['a=1', [['a', '1']]],
    ['a = 1', [['a', '1']]],
    ['a:1', [['a', '1']]],
    ['a 1', [['a', '1']]],
    ['a\t=\t1  ', [['a', '1  ']]],
    ['   a=1', [['a', '1']]],
    ['a=', [['a', '']]],
    ['a', [['a', '']]],
    ['a==1', [['a', '=1']]],
    ['a=b=c', [['a', 'b=c']]],
    ['# comment\n! also\n\n  # indented', []],
    ['a=1 # not a comment', [['a', '1 # not a comment']]],
    ['a\\=b=c', [['a=b', 'c']]],
    ['a\\ b=c', [['a b', 'c']]],
    ['a=one \\\n    two', [['a', 'one two']]],
    ['a=one\\\\', [['a', 'one\\']]],
    ['a=tab\\there\\nnext', [['a', 'tab\there\nnext']]],
    ['a=caf\\u00e9', [['a', 'café']]],
    ['a=café', [['a', 'café']]],
    ['a=c:\\\\dir', [['a', 'c:\\dir']]],
    ['a=\\q', [['a', 'q']]],
    [
      'a=1\r\nb=2\rc=3',
      [
        ['a', '1'],
        ['b', '2'],
        ['c', '3'],
      ],
    ],
    ['a=${X}', [['a', '${X}']]],
  ])('%j', (text, expected) => {
    expect(entries(text)).toEqual(expected);
  });

  it('keeps the line each entry starts on, continuation lines included', () => {
    expect(parseProperties('# x\na=1 \\\n  2\nb=3\n').entries).toEqual([
      { key: 'a', value: '1 2', line: 2 },
      { key: 'b', value: '3', line: 4 },
    ]);
  });

  it('reports a malformed \\u escape, which would stop Play', () => {
    expect(parseProperties('ok=1\nbad=\\u12\n').problems).toEqual([{ line: 2, message: 'malformed \\uxxxx escape "\\u12"' }]);
  });
});

describe('framework id (Play 1.x files; Play rule 1)', () => {
  const conf = parseProperties(
    ['%platform.a=from id  ', 'a=plain', 'b=plain only', '%prod.b=other id', '%prod.c=other id only', '%platform.d=id only', '%platform-2.a=look-alike id'].join('\n'),
  ).entries;

  it('lets %platform. keys replace plain ones whatever their order, trims them, and drops other ids', () => {
    const view = applyFrameworkId(conf, 'platform');
    expect(Object.fromEntries([...view.applied].map(([k, e]) => [k, e.value]))).toEqual({ a: 'from id', b: 'plain only', d: 'id only' });
    expect(view.applied.get('a')).toMatchObject({ writtenAs: '%platform.a', line: 1, replaces: { key: 'a', line: 2 } });
    expect(view.otherIds.map((e) => e.key)).toEqual(['%prod.b', '%prod.c', '%platform-2.a']);
  });

  it('applies the keys of the id it is given only', () => {
    const view = applyFrameworkId(conf, 'prod');
    expect(view.applied.get('b')?.value).toBe('other id');
    expect(view.applied.has('d')).toBe(false);
  });
});

describe('${NAME} references', () => {
  it('finds every reference of a value, in order', () => {
    expect(references('jdbc:postgresql://${PG_HOST}:${PG_PORT}/${PG_DB}')).toEqual(['PG_HOST', 'PG_PORT', 'PG_DB']);
    expect(references('no $X {Y} $ {Z} ${}')).toEqual([]);
  });

  it('classifies each as Play resolves it: its paths, system properties, then variables', () => {
    const { view } = readApplicationConf('p=${application.path}/x\nj=${java.io.tmpdir}\nh=${PG_HOST}\nu=${UNSET}\n%prod.skipped=${NOT_ON_THIS_ID}\n');
    const statuses = classifyReferences(view, (name) => (name === 'PG_HOST' ? 'addon pg' : undefined)).map((r) => [r.key, r.name, r.status.kind]);
    expect(statuses).toEqual([
      ['p', 'application.path', 'framework'],
      ['j', 'java.io.tmpdir', 'system-property'],
      ['h', 'PG_HOST', 'variable'],
      ['u', 'UNSET', 'undefined'],
    ]);
  });
});

describe('what the plan says about application.conf', () => {
  const analyse = (text: string, defined: Record<string, string> = {}) => analyseConf(readApplicationConf(text), (n) => defined[n]);
  const codes = (text: string) => analyse(text).warnings.map((w) => w.code);

  it('warns about each undefined reference, naming the key, the line and the variable', () => {
    const { warnings } = analyse('%platform.db.pass=${DB_PASS}\nXForwardedSupport=all\n');
    expect(warnings).toEqual([
      expect.objectContaining({
        code: 'RUNPLAN_W_PLAY1_UNDEFINED_REFERENCE',
        file: 'conf/application.conf',
        variable: 'DB_PASS',
        message: expect.stringContaining('%platform.db.pass (line 1) refers to ${DB_PASS}'),
      }),
    ]);
    expect(analyse('%platform.db.pass=${DB_PASS}\nXForwardedSupport=all\n', { DB_PASS: 'addon pg' }).warnings).toEqual([]);
  });

  it.each([
    ['', true],
    ['XForwardedSupport=all', false],
    ['XForwardedSupport=ALL', false],
    ['%platform.XForwardedSupport=all', false],
    ['%prod.XForwardedSupport=all', true],
    ['XForwardedSupport=10.0.0.1,10.0.0.2', true],
    ['XForwardedSupport=all\n%platform.XForwardedSupport=127.0.0.1', true],
  ])('XForwardedSupport in %j → warning %s', (text, warned) => {
    expect(codes(text).includes('RUNPLAN_W_PLAY1_XFORWARDED_SUPPORT')).toBe(warned);
  });

  it('explains a proxy list differently from a missing setting', () => {
    expect(analyse('XForwardedSupport=10.0.0.1').warnings[0]?.message).toContain('This proxy request is not authorized');
    expect(analyse('').warnings[0]?.message).toContain('request.secure will be false');
  });

  it.each([
    ['', false],
    ['application.mode=prod', false],
    ['application.mode=dev', true],
    ['application.mode=DEV\njpda.port=8001', true],
    ['application.mode=dev\n%platform.application.mode=prod', false],
  ])('application.mode in %j → dev-mode warning %s', (text, warned) => {
    expect(codes(`XForwardedSupport=all\n${text}`).includes('RUNPLAN_W_PLAY1_DEV_MODE')).toBe(warned);
  });

  it('explains which keys the id replaced and which ids do not apply, without copying values', () => {
    const { decision } = analyse('db.pass=literal-secret\n%platform.db.pass=${PG_PASSWORD}\n%prod.x=1\n', { PG_PASSWORD: 'addon pg' });
    expect(decision).toMatchObject({ id: 'play1.config', resolved: '1 key apply, 1 from %platform. entries, 1 ${…} reference' });
    expect(decision.reason).toContain('%platform.db.pass (line 2) replaces db.pass (line 1)');
    expect(decision.reason).toContain('${PG_PASSWORD} in %platform.db.pass comes from addon pg');
    expect(decision.overridden).toEqual([
      { source: 'conf/application.conf line 1: db.pass', value: null, reason: 'replaced by %platform.db.pass (line 2) on framework id platform' },
      { source: 'conf/application.conf line 3: %prod.x', value: null, reason: 'framework id prod is not platform, so the entry does not apply' },
    ]);
    expect(JSON.stringify(decision)).not.toContain('literal-secret');
  });
});
