import { describe, expect, it } from 'vitest';
import { bundledNpm, NODE_BUNDLED_NPM } from '../../buildpacks/node/bundled-npm.js';
import { NodeErrors } from '../../buildpacks/node/errors.js';
import { NODE_LTS_LINES } from '../../buildpacks/node/lts.js';
import { resolveNpm } from '../../buildpacks/node/resolve-npm.js';

// A slice of the npm releases the registry publishes, with their engines.node.
const RELEASES = [
  { version: '1.2.20', engines: { node: '>=0.6' } },
  { version: '6.14.18', engines: undefined },
  { version: '8.19.4', engines: { node: '^12.13.0 || ^14.15.0 || >=16.0.0' } },
  { version: '10.1.0', engines: { node: '^18.17.0 || >=20.5.0' } },
  { version: '10.9.2', engines: { node: '^18.17.0 || >=20.5.0' } },
  { version: '11.6.0', engines: { node: '^20.17.0 || >=22.9.0' } },
  { version: '11.19.0', engines: { node: '^20.17.0 || >=22.9.0' } },
  { version: '11.21.2', engines: { node: '^20.17.0 || >=22.9.0' } },
  { version: '12.0.0-pre.1', engines: { node: '>=20' } },
  { version: '12.2.0', engines: { node: '^22.22.2 || ^24.15.0 || >=26.0.0' } },
];

describe('the table of the npm each Node.js release ships', () => {
  it('knows the releases of its lines, change point by change point', () => {
    expect(bundledNpm('24.21.0')).toMatchObject({ kind: 'known', npm: '11.19.0' });
    expect(bundledNpm('24.0.0')).toMatchObject({ kind: 'known', npm: '11.3.0' });
    expect(bundledNpm('24.2.0')).toMatchObject({ kind: 'known', npm: '11.3.0' });
    expect(bundledNpm('22.23.3')).toMatchObject({ kind: 'known', npm: '10.9.9' });
    expect(bundledNpm('20.9.0')).toMatchObject({ kind: 'known', npm: '10.1.0' });
    expect(bundledNpm('18.20.8')).toMatchObject({ kind: 'known', npm: '10.8.2' });
    expect(bundledNpm('14.0.0')).toMatchObject({ kind: 'known', npm: '6.14.4' });
  });

  it('says when a release is newer than its data, and when it has none', () => {
    const line24 = NODE_BUNDLED_NPM.find((l) => l.line === 24);
    const through = line24?.through as string;
    const [major, minor] = through.split('.').map(Number);
    // The npm of the line's last upgrade (the table grows as Node.js publishes).
    expect(bundledNpm(`${major}.${(minor as number) + 1}.0`)).toEqual({ kind: 'newer', latest: { node: through, npm: line24?.npm.at(-1)?.[1] } });
    const last = NODE_BUNDLED_NPM.at(-1);
    expect(bundledNpm(`${(last?.line as number) + 1}.0.0`)).toMatchObject({ kind: 'newer', latest: { node: last?.through } });
    expect(bundledNpm('12.22.12')).toMatchObject({ kind: 'none', why: expect.stringContaining('starts with 14.x') });
    expect(bundledNpm('15.14.0')).toMatchObject({ kind: 'none', why: expect.stringContaining('no data for 15.x') });
  });

  it('covers every LTS line from its first, each from its .0.0 release, change points in order', () => {
    const first = NODE_BUNDLED_NPM[0]?.line as number;
    for (const lts of NODE_LTS_LINES.filter((l) => l.major >= first)) {
      const line = NODE_BUNDLED_NPM.find((l) => l.line === lts.major);
      expect(line, `LTS line ${lts.major}.x`).toBeDefined();
      expect(line?.npm[0]?.[0]).toBe(`${lts.major}.0.0`);
    }
    for (const line of NODE_BUNDLED_NPM) {
      const nodes = line.npm.map(([node]) => node);
      expect([...nodes].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))).toEqual(nodes);
      for (const [node] of line.npm) expect(node.startsWith(`${line.line}.`)).toBe(true);
    }
  });
});

describe('npm for a Node.js version', () => {
  it('is the npm the release ships, the newer npm that accepts it losing', () => {
    const r = resolveNpm('24.21.0', RELEASES);
    expect(r.version).toBe('11.19.0');
    expect(r.decision).toEqual({
      id: 'node.npm',
      subject: 'npm version',
      requested: null,
      source: 'Node.js 24.21.0',
      resolved: '11.19.0',
      reason: expect.stringContaining("Node.js 24.21.0 ships npm 11.19.0 (Node.js's changelog of the 24.x line"),
      overridden: [{ source: 'the newest npm declaring support for it', value: '12.2.0', reason: expect.stringContaining('ships npm 11.19.0') }],
    });
    expect(resolveNpm('20.9.0', RELEASES).version).toBe('10.1.0');
    // npm 6 declares no engines.node: the table needs none.
    expect(resolveNpm('14.21.3', RELEASES).version).toBe('6.14.18');
  });

  it('does not keep a previous plan’s npm: the Node.js release decides, not a default', () => {
    expect(resolveNpm('24.21.0', RELEASES, { previousDefault: '12.2.0' }).version).toBe('11.19.0');
  });

  it('takes the newest npm of the same major for a release newer than the table, saying so', () => {
    const r = resolveNpm('24.99.0', RELEASES);
    expect(r.version).toBe('11.21.2');
    // The table's last release of the line and its npm, read from the table (it grows as Node.js publishes).
    const line24 = NODE_BUNDLED_NPM.find((l) => l.line === 24);
    const shipped = `${line24?.through} ships npm ${line24?.npm.at(-1)?.[1]}`;
    expect(r.decision.reason).toContain(`table of bundled npm versions ends before Node.js 24.99.0 (${shipped}): the newest npm 11 `);
    expect(resolveNpm('99.0.0', RELEASES).version).toBe('11.21.2');
  });

  it('takes the newest npm of that major when the registry lacks the one the release ships', () => {
    const r = resolveNpm(
      '24.21.0',
      RELEASES.filter((n) => n.version !== '11.19.0'),
    );
    expect(r.version).toBe('11.21.2');
    expect(r.decision.reason).toContain('which the registry does not publish');
  });

  it('keeps the older rule before the table: the newest npm whose engines.node accepts the release', () => {
    expect(resolveNpm('0.8.28', RELEASES).version).toBe('1.2.20');
    expect(resolveNpm('12.22.12', RELEASES)).toMatchObject({ version: '8.19.4', decision: { source: 'default', reason: expect.stringContaining('starts with 14.x') } });
    // There a previous plan's default stays while it still accepts the release.
    const kept = [...RELEASES, { version: '8.19.3', engines: { node: '^12.13.0 || ^14.15.0 || >=16.0.0' } }];
    expect(resolveNpm('12.22.12', kept, { previousDefault: '8.19.3' }).decision).toMatchObject({ source: 'previous plan', resolved: '8.19.3' });
  });

  it('refuses a release no published npm supports when the table has no data for it', () => {
    expect(() => resolveNpm('12.22.12', RELEASES.slice(1, 2))).toThrowError(
      expect.objectContaining({ code: NodeErrors.NODE_RUNTIME_INSTALL_FAILED.code, message: expect.stringContaining('Node.js 12.22.12') }),
    );
  });
});

describe('engines.npm', () => {
  it('keeps the npm the release ships when the range allows it', () => {
    expect(resolveNpm('24.21.0', RELEASES, { enginesNpm: '>=10' }).decision).toMatchObject({
      source: 'package.json engines.npm',
      requested: '>=10',
      resolved: '11.19.0',
      reason: 'Node.js 24.21.0 ships npm 11.19.0, which package.json engines.npm allows',
    });
  });

  it('wins over the npm the release ships, which is reported as losing', () => {
    const r = resolveNpm('24.21.0', RELEASES, { enginesNpm: '^12' });
    expect(r.version).toBe('12.2.0');
    expect(r.decision.overridden).toEqual([{ source: 'Node.js 24.21.0', value: '11.19.0', reason: expect.stringContaining('does not allow') }]);
    expect(resolveNpm('24.21.0', RELEASES, { enginesNpm: '11.6.0' }).version).toBe('11.6.0');
  });

  it('prefers npm releases that declare support for the Node.js version', () => {
    expect(resolveNpm('20.9.0', RELEASES, { enginesNpm: '>=10.9.0' }).version).toBe('10.9.2');
  });

  it('is a coded input error naming package.json when nothing matches or it is no range', () => {
    for (const enginesNpm of ['^99', 'not a range']) {
      expect(() => resolveNpm('24.21.0', RELEASES, { enginesNpm })).toThrowError(expect.objectContaining({ code: NodeErrors.NODE_NPM_VERSION_UNSATISFIABLE.code, file: 'package.json' }));
    }
  });
});
