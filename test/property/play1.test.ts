/**
 * Properties of the Play 1.x buildpack's parsers and resolvers (issue 11): the
 * version values, application.conf (a java.util.Properties file), the JVM memory
 * options and whole plans return a valid result or throw a coded RunplanError.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyFrameworkId, readApplicationConf } from '../../buildpacks/play1/application-conf.js';
import { DEFAULT_JVM_SIZING, heapSize, resolveJvmMemory } from '../../buildpacks/play1/jvm-memory.js';
import { parseProperties } from '../../buildpacks/play1/properties.js';
import { resolvePlay1Version } from '../../buildpacks/play1/resolve-version.js';
import { ACCEPTED_VALUES, PLAY1_SERIES } from '../../buildpacks/play1/versions.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { RunPlanSchema } from '../../src/plan/schema.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';
import { codedOr, codedOrAsync, hostileString, nearly, optional, RUNS } from './arbitraries.js';

const versionValue = nearly(fc.oneof(fc.constantFrom(...ACCEPTED_VALUES), fc.constantFrom('1.5.3', '1.12', '2.0', '12', '13', '1.1')));

describe('Play 1.x version values', () => {
  it('selects the series the winning value names, or refuses with a code', () => {
    fc.assert(
      fc.property(optional(versionValue), optional(versionValue), optional(versionValue), (variable, file, host) => {
        const r = codedOr(() =>
          resolvePlay1Version({
            ...(variable === undefined ? {} : { variable: { value: variable, origin: 'application variables' } }),
            ...(file === undefined ? {} : { file }),
            ...(host === undefined ? {} : { hostDefault: { value: host, origin: 'RUNPLAN_PLAY1_DEFAULT_VERSION' } }),
          }),
        );
        if (r === undefined) return;
        expect(PLAY1_SERIES).toContain(r.series);
        const winner = [variable, file, host].find((v) => v !== undefined && v.trim() !== '');
        if (winner !== undefined) expect(r.series.accepted).toContain(winner.trim());
      }),
      { numRuns: RUNS.pure },
    );
  });
});

/** What java.util.Properties#store writes for a key or value (without its \uXXXX for non-Latin-1: Play reads UTF-8). */
function escapeProperty(s: string, isKey: boolean): string {
  let out = '';
  for (const [i, c] of [...s].entries()) {
    if (c === '\\') out += '\\\\';
    else if (c === '\t') out += '\\t';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\f') out += '\\f';
    else if (c === ' ' && (isKey || i === 0)) out += '\\ ';
    else if ('=:#!'.includes(c)) out += `\\${c}`;
    else out += c;
  }
  return out;
}

describe('application.conf (java.util.Properties)', () => {
  it('reading any text never throws; what Java would refuse is a problem with a line number', () => {
    fc.assert(
      fc.property(fc.array(nearly(fc.constantFrom('a=b', '%platform.x=1', 'k\\', '  c : d', 'e\\u00e9', '#c', 'x=${Y}')), { maxLength: 6 }), (lines) => {
        const text = lines.join('\n');
        const conf = readApplicationConf(text);
        const count = text.split(/\r\n|\r|\n/).length;
        for (const p of conf.problems) expect(p.line >= 1 && p.line <= count).toBe(true);
        for (const e of conf.entries) expect(e.line >= 1 && e.line <= count).toBe(true);
      }),
      { numRuns: RUNS.pure },
    );
  });

  it('a properties file written as Java writes it parses back to exactly its keys and values, in order', () => {
    const text = fc.string({
      unit: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom('a', 'Z', '.', '%', '$', '{', '}', '_') },
        fc.constantFrom(' ', '\t', '\n', '\r', '\f', '\\', '=', ':', '#', '!', 'é', '日', '🚀', '\u2028', '\0', '\uFEFF'),
      ),
      maxLength: 12,
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.tuple(
            text.filter((k) => k !== ''),
            text,
          ),
          { selector: ([k]) => k, maxLength: 6 },
        ),
        fc.constantFrom('\n', '\r\n', '\r'),
        (pairs, eol) => {
          const file = pairs.map(([k, v]) => `${escapeProperty(k, true)}=${escapeProperty(v, false)}${eol}`).join('');
          const parsed = parseProperties(file);
          expect(parsed.problems).toEqual([]);
          expect(parsed.entries.map((e) => [e.key, e.value])).toEqual(pairs);
        },
      ),
      { numRuns: RUNS.pure },
    );
  });

  it('%platform. entries replace their plain key whatever the order; other ids never apply', () => {
    const key = fc.constantFrom('db.url', 'jvm.memory', 'application.mode', 'x');
    const entry = fc.tuple(fc.constantFrom('', '%platform.', '%dev.', '%prod.'), key, fc.constantFrom('1', '2', ' 3 ')).map(([p, k, v]) => ({ key: `${p}${k}`, value: v }));
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 8 }), (list) => {
        const entries = list.map((e, i) => ({ ...e, line: i + 1 }));
        const view = applyFrameworkId(entries, 'platform');
        for (const [k, applied] of view.applied) {
          const forId = entries.filter((e) => e.key === `%platform.${k}`).pop();
          const plain = entries.filter((e) => e.key === k).pop();
          expect(applied.value).toBe(forId ? forId.value.trim() : plain?.value);
        }
        for (const e of view.otherIds) expect(e.key.startsWith('%platform.')).toBe(false);
      }),
      { numRuns: RUNS.pure },
    );
  });
});

describe('JVM memory', () => {
  it('the heap stays within the instance and the sizing bounds, for any instance size', () => {
    fc.assert(
      fc.property(fc.integer({ min: 64, max: 64 * 1024 * 1024 }), fc.integer({ min: 1, max: 1024 }), optional(hostileString), (memoryMb, cpus, conf) => {
        const size = heapSize(memoryMb);
        expect(size.reserveMb).toBeGreaterThanOrEqual(DEFAULT_JVM_SIZING.minReserveMb);
        expect(size.reserveMb).toBeLessThanOrEqual(DEFAULT_JVM_SIZING.maxReserveMb);
        expect(size.maxHeapMb).toBeGreaterThanOrEqual(DEFAULT_JVM_SIZING.minHeapMb);
        expect(size.initialHeapMb).toBeLessThanOrEqual(size.maxHeapMb);
        const r = resolveJvmMemory({ memoryMb, cpus }, conf === undefined ? undefined : { key: 'jvm.memory', value: conf, line: 1, writtenAs: 'jvm.memory' });
        if (conf?.trim()) expect(r.args).toEqual([]);
        else expect(r.args).toEqual([`-Xmx${size.maxHeapMb}m`, `-Xms${size.initialHeapMb}m`]);
      }),
      { numRuns: RUNS.pure },
    );
  });
});

describe('planning a Play 1.x application', () => {
  it('plans any application.conf, version file and variables, or refuses with a code', async () => {
    const conf = fc.array(nearly(fc.constantFrom('application.name=demo', '%platform.XForwardedSupport=all', 'jvm.memory=-Xmx256m', 'db.url=${DATABASE_URL}', 'application.mode=dev')), {
      maxLength: 5,
    });
    const env = fc.record({ PLAY1_VERSION: versionValue, DATABASE_URL: hostileString, CC_RUN_COMMAND: hostileString, CC_HEALTH_CHECK_PATH: nearly(fc.constant('/')) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(conf, optional(versionValue), env, async (lines, file, vars) => {
        const files: Record<string, string> = {
          'conf/application.conf': lines.join('\n'),
          'conf/routes': 'GET / Application.index\n',
          ...(file === undefined ? {} : { 'platform/play1_version': file }),
        };
        const result = await codedOrAsync(() =>
          createPlan({ registry: testRegistry(), inventory: TEST_PLAN_INVENTORY, files: new MemorySource(files), appDir: '/srv/app', env: { application: vars }, type: 'play1' }),
        );
        if (result !== undefined) expect(RunPlanSchema.safeParse(result.plan).success).toBe(true);
      }),
      { numRuns: RUNS.plan },
    );
  });
});
