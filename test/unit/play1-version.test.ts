import { describe, expect, it } from 'vitest';
import { Play1Errors } from '../../buildpacks/play1/errors.js';
import { resolvePlay1Version } from '../../buildpacks/play1/resolve-version.js';
import { ACCEPTED_VALUES, DEFAULT_PLAY1_SERIES, PLAY1_SERIES } from '../../buildpacks/play1/versions.js';

const env = (value: string) => ({ variable: { value, origin: 'application variables' } });

describe('Play 1.x version values (Versioning; NOTES.md "Play 1.x version")', () => {
  // Every accepted value, written out rather than derived, so the table itself is checked.
  const table: Array<[string, string, string]> = [
    ['1.2', '1.2', '1.2.7.2'],
    ['12', '1.2', '1.2.7.2'],
    ['1.3', '1.3', '1.3.4'],
    ['13', '1.3', '1.3.4'],
    ['1.4', '1.4', '1.4.6'],
    ['14', '1.4', '1.4.6'],
    ['1.5', '1.5', '1.5.3'],
    ['15', '1.5', '1.5.3'],
    ['1.6', '1.6', '1.6.0'],
    ['16', '1.6', '1.6.0'],
    ['1.7', '1.7', '1.7.1'],
    ['17', '1.7', '1.7.1'],
    ['1.8', '1.8', '1.8.0'],
    ['18', '1.8', '1.8.0'],
    ['1.9', '1.9', '1.9.0'],
    ['19', '1.9', '1.9.0'],
    ['1.10', '1.10', '1.10.0'],
    ['110', '1.10', '1.10.0'],
    ['1.11', '1.11', '1.11.0'],
    ['111', '1.11', '1.11.0'],
  ];

  it('accepts exactly the values of the table', () => {
    expect([...ACCEPTED_VALUES].sort()).toEqual(table.map(([v]) => v).sort());
  });

  it.each(table)('PLAY1_VERSION=%s selects series %s, release %s', (value, series, release) => {
    const r = resolvePlay1Version(env(value));
    expect(r.series.series).toBe(series);
    expect(r.decision).toMatchObject({ id: 'play1.version', requested: value, source: 'env PLAY1_VERSION (application variables)', resolved: release });
  });

  it.each(table)('platform/play1_version holding %s selects series %s, release %s', (value, series, release) => {
    const r = resolvePlay1Version({ file: `${value}\n` });
    expect(r.series.series).toBe(series);
    expect(r.decision).toMatchObject({ requested: value, source: 'platform/play1_version', resolved: release });
  });

  it('says why 12 means 1.2 and why 1.3 is 13, as NOTES.md settles the collision', () => {
    expect(resolvePlay1Version(env('12')).decision.reason).toMatch(
      /12 is the short code of 1\.2\. The specification lists 12 for 1\.3 as well, which collides with 1\.2; as NOTES\.md settles, 12 means 1\.2/,
    );
    expect(resolvePlay1Version(env('13')).decision.reason).toMatch(/13 is the short code of 1\.3 \(used instead of the specification's colliding 12/);
  });

  it('trims surrounding blanks', () => {
    expect(resolvePlay1Version(env(' 1.4 ')).series.series).toBe('1.4');
    expect(resolvePlay1Version({ file: '\n 15 \r\n' }).series.series).toBe('1.5');
  });
});

describe('Play 1.x version sources', () => {
  it('PLAY1_VERSION wins over the file, which is reported as overridden', () => {
    const r = resolvePlay1Version({ ...env('15'), file: '1.3\n' });
    expect(r.series.series).toBe('1.5');
    expect(r.decision.overridden).toEqual([{ source: 'platform/play1_version', value: '1.3', reason: 'PLAY1_VERSION takes precedence over platform/play1_version' }]);
  });

  it('treats an empty variable or file as unset, and says so', () => {
    const fromFile = resolvePlay1Version({ ...env(''), file: '14' });
    expect(fromFile.decision).toMatchObject({ source: 'platform/play1_version', resolved: '1.4.6' });
    expect(fromFile.decision.overridden[0]).toMatchObject({ source: 'env PLAY1_VERSION', reason: 'empty, so treated as unset' });
    const fallback = resolvePlay1Version({ file: '  \n' });
    expect(fallback.decision.source).toBe('default');
    expect(fallback.decision.overridden[0]).toMatchObject({ source: 'platform/play1_version', value: null });
  });

  it('uses the documented default series when nothing is set', () => {
    const r = resolvePlay1Version({});
    expect(r.series.series).toBe(DEFAULT_PLAY1_SERIES);
    expect(r.decision).toMatchObject({ requested: null, source: 'default', resolved: '1.11.0' });
  });

  it('uses a host default before its own, and validates it', () => {
    const r = resolvePlay1Version({ hostDefault: { value: '1.5', origin: 'RUNPLAN_PLAY1_DEFAULT_VERSION' } });
    expect(r.decision).toMatchObject({ source: 'host default (RUNPLAN_PLAY1_DEFAULT_VERSION)', resolved: '1.5.3' });
    expect(resolvePlay1Version({ ...env('1.2'), hostDefault: { value: '1.5', origin: 'x' } }).series.series).toBe('1.2');
    expect(() => resolvePlay1Version({ hostDefault: { value: '2', origin: 'RUNPLAN_PLAY1_DEFAULT_VERSION' } })).toThrowError(
      expect.objectContaining({ code: Play1Errors.PLAY1_VERSION_INVALID.code, variable: 'RUNPLAN_PLAY1_DEFAULT_VERSION' }),
    );
  });
});

describe('invalid Play 1.x versions', () => {
  const listed = PLAY1_SERIES.map((s) => `${s.series} or ${s.series.replace('.', '')} (${s.series})`).join(', ');

  it.each(['2.0', '1', '1.1', '1.12', '11', '1.2.7', 'latest', 'v1.5', '1,5', '015'])('refuses %j naming the variable and listing the accepted values', (value) => {
    expect(() => resolvePlay1Version(env(value))).toThrowError(
      expect.objectContaining({ code: Play1Errors.PLAY1_VERSION_INVALID.code, variable: 'PLAY1_VERSION', message: expect.stringContaining(`Accepted values: ${listed}.`) }),
    );
  });

  it('names the file when the value comes from it, even if the variable is absent', () => {
    expect(() => resolvePlay1Version({ file: 'play-1.4' })).toThrowError(
      expect.objectContaining({ file: 'platform/play1_version', message: expect.stringContaining('platform/play1_version holds "play-1.4", which is not an accepted Play 1.x version') }),
    );
  });

  it('refuses an invalid variable even when the file is valid: the variable wins', () => {
    expect(() => resolvePlay1Version({ ...env('9'), file: '1.5' })).toThrowError(expect.objectContaining({ variable: 'PLAY1_VERSION' }));
  });

  it('suggests the series when given a release number', () => {
    expect(() => resolvePlay1Version(env('1.5.3'))).toThrowError(/Give the series \(1\.5\), not a release/);
  });
});

describe("a previous plan's default (plan --previous)", () => {
  it("keeps the release runplan's default chose, saying what the default gives now", () => {
    const r = resolvePlay1Version({ previousDefault: '1.10.0' });
    expect(r.series.series).toBe('1.10');
    expect(r.decision).toMatchObject({
      id: 'play1.version',
      requested: null,
      source: 'previous plan',
      resolved: '1.10.0',
      reason: expect.stringMatching(/^kept from the previous plan .*the default now gives 1\.11\.0 \(neither PLAY1_VERSION nor platform\/play1_version is set/),
      overridden: [{ source: 'default', value: '1.11.0', reason: expect.stringContaining('plan without --previous') }],
    });
  });

  it('keeps what an empty variable or file said beside it', () => {
    expect(resolvePlay1Version({ file: '\n', previousDefault: '1.10.0' }).decision.overridden.map((o) => o.source)).toEqual(['platform/play1_version', 'default']);
  });

  it('is the default itself when the default has not moved, and nothing for a release runplan does not know', () => {
    expect(resolvePlay1Version({ previousDefault: '1.11.0' }).decision).toMatchObject({ source: 'default', resolved: '1.11.0', overridden: [] });
    expect(resolvePlay1Version({ previousDefault: '1.10.1' }).decision).toMatchObject({ source: 'default', resolved: '1.11.0' });
    expect(resolvePlay1Version({ previousDefault: '1.10' }).decision).toMatchObject({ source: 'default', resolved: '1.11.0' });
  });

  it('is not kept when the application or the host asks for a version', () => {
    expect(resolvePlay1Version({ ...env('1.11'), previousDefault: '1.10.0' }).decision).toMatchObject({ source: 'env PLAY1_VERSION (application variables)', resolved: '1.11.0' });
    expect(resolvePlay1Version({ file: '1.9', previousDefault: '1.10.0' }).decision).toMatchObject({ source: 'platform/play1_version', resolved: '1.9.0' });
    expect(resolvePlay1Version({ hostDefault: { value: '1.11', origin: 'RUNPLAN_PLAY1_DEFAULT_VERSION' }, previousDefault: '1.10.0' }).decision).toMatchObject({
      source: 'host default (RUNPLAN_PLAY1_DEFAULT_VERSION)',
      resolved: '1.11.0',
    });
  });
});
