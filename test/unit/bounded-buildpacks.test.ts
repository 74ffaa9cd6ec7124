import { EventEmitter } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callBuildpack } from '../../src/buildpack/call-buildpack.js';
import type { Buildpack } from '../../src/buildpack/contract.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { untilFinished } from '../../src/cli/unfinished.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { MemorySource } from '../../src/files/memory-source.js';
import * as kit from '../../src/kit/index.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { type Clock, InstantClock } from '../../src/time/clock.js';
import { webOnlyContribution } from '../helpers/contribution.js';
import { TEST_PLAN_INVENTORY } from '../helpers/inventory.js';
import { removeAfterFile } from '../helpers/temp.js';

const never = () => new Promise<never>(() => undefined);

/** A clock whose sleeps end only when told, recording how each was given up. */
class HeldClock implements Clock {
  readonly signals: AbortSignal[] = [];
  now(): number {
    return 0;
  }
  sleep(_ms: number, signal?: AbortSignal): Promise<void> {
    if (signal) this.signals.push(signal);
    return never();
  }
}

describe('calls into a buildpack (callBuildpack)', () => {
  const limit = { timeoutMs: 60_000, clock: new InstantClock() };

  it('returns what a call gives in time, and gives its timer up at once', async () => {
    const clock = new HeldClock();
    await expect(callBuildpack('demo', 'detect', { timeoutMs: 60_000, clock }, async () => 42)).resolves.toBe(42);
    // A timer left running would keep the CLI alive for the whole limit after the buildpack answered.
    expect(clock.signals.map((s) => s.aborted)).toEqual([true]);
  });

  it('gives up on a call that never settles, naming the buildpack and the phase', async () => {
    await expect(callBuildpack('demo', 'plan', limit, never)).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_TIMEOUT.code,
      kind: 'deployment',
      reason: 'buildpack "demo" did not finish plan() within 60 s; runplan stopped waiting for it.',
      details: { buildpack: 'demo', phase: 'plan', timeoutMs: 60_000 },
    });
  });

  it('turns what it throws, at once or later, into a coded failure that keeps the cause', async () => {
    const thrown = new TypeError('cannot read x of undefined');
    const failure = await callBuildpack('demo', 'detect', limit, () => {
      throw thrown;
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: CoreErrors.BUILDPACK_FAILED.code,
      kind: 'deployment',
      reason: 'buildpack "demo" failed in detect(): TypeError: "cannot read x of undefined".',
      details: { buildpack: 'demo', phase: 'detect', cause: { name: 'TypeError', message: 'cannot read x of undefined' } },
    });
    expect((failure as Error).cause).toBe(thrown);
    await expect(callBuildpack('demo', 'gather', limit, () => Promise.reject(new Error('offline')))).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_FAILED.code,
      details: { phase: 'gather', cause: { name: 'Error', message: 'offline' } },
    });
  });

  it('reports any thrown value, even one that cannot be read, and bounds its text', async () => {
    await expect(callBuildpack('demo', 'plan', limit, () => Promise.reject('x'.repeat(100_000)))).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_FAILED.code,
      reason: expect.stringContaining('(and 881 more characters)'),
      details: { cause: { name: 'string', message: expect.stringMatching(/^x{1000}…$/) } },
    });
    const hostile = {
      toString() {
        throw new Error('no');
      },
    };
    await expect(callBuildpack('demo', 'plan', limit, () => Promise.reject(hostile))).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_FAILED.code,
      details: { cause: { name: 'object', message: '(the thrown value cannot be read)' } },
    });
  });

  it("passes a buildpack's own coded error unchanged: the application is at fault, not the buildpack", async () => {
    const own = CoreErrors.DETECT_REJECTED.create({ message: 'the app is broken.' });
    await expect(callBuildpack('demo', 'detect', limit, () => Promise.reject(own))).rejects.toBe(own);
  });

  it('stops waiting when the signal is given', async () => {
    const controller = new AbortController();
    const call = callBuildpack('demo', 'detect', { timeoutMs: 60_000, clock: new HeldClock(), signal: controller.signal }, never);
    controller.abort('SIGTERM');
    await expect(call).rejects.toMatchObject({ code: CoreErrors.BUILD_INTERRUPTED.code, details: { buildpack: 'demo', phase: 'detect' } });
  });
});

/** A buildpack whose code is given by the test; everything else is a valid one. */
function buildpack(parts: Partial<Pick<Buildpack, 'detector' | 'planner' | 'inventory'>>): Buildpack {
  return {
    id: 'demo',
    name: 'Demo',
    priority: 100,
    defaultHealthCheck: { kind: 'port', reason: 'demo' },
    detector: { detect: async () => ({ status: 'pass', evidence: ['always'] }) },
    planner: { plan: async ({ host }) => webOnlyContribution(['true'], host.port) },
    ...parts,
  };
}

/** A cache directory of the test's own, removed after the file (test/helpers/temp.ts). */
function scratchCache(): string {
  const dir = mkdtempSync(join(tmpdir(), 'runplan-bounded-'));
  removeAfterFile(dir);
  return dir;
}

// Real time, and a limit of milliseconds: the calls below never settle, and nothing else is waited for.
const plan = (bp: Buildpack, inventory = true) =>
  createPlan({
    registry: new BuildpackRegistry([bp]),
    files: new MemorySource({ 'x.txt': '' }),
    ...(inventory ? { inventory: { ...TEST_PLAN_INVENTORY, buildpacks: { ...TEST_PLAN_INVENTORY.buildpacks, demo: {} } } } : {}),
    host: { buildpackTimeoutMs: 5, inventoryTimeoutMs: 5, cacheDir: scratchCache() },
  });
const anyValue = z.unknown();

describe('planning with a buildpack that hangs, throws or returns garbage', () => {
  it('plans with a buildpack that answers', async () => {
    await expect(plan(buildpack({}))).resolves.toMatchObject({ plan: { app: { type: 'demo' } } });
  });

  it.each([
    ['detect', { detector: { detect: never } }],
    ['plan', { planner: { plan: never } }],
  ] as const)('bounds %s() with the host buildpack timeout', async (phase, parts) => {
    await expect(plan(buildpack(parts))).rejects.toMatchObject({ code: CoreErrors.BUILDPACK_TIMEOUT.code, details: { buildpack: 'demo', phase, timeoutMs: 5 } });
  });

  it("bounds an inventory provider's gather() with the host inventory timeout", async () => {
    await expect(plan(buildpack({ inventory: { schema: anyValue, gather: never } }), false)).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_TIMEOUT.code,
      details: { buildpack: 'demo', phase: 'gather' },
    });
  });

  it('names the buildpack whose detect() or plan() throws', async () => {
    const boom = async () => {
      throw new RangeError('boom');
    };
    await expect(plan(buildpack({ detector: { detect: boom } }))).rejects.toMatchObject({ code: CoreErrors.BUILDPACK_FAILED.code, details: { buildpack: 'demo', phase: 'detect' } });
    await expect(plan(buildpack({ planner: { plan: boom } }))).rejects.toMatchObject({ code: CoreErrors.BUILDPACK_FAILED.code, details: { buildpack: 'demo', phase: 'plan' } });
  });

  it("names the buildpack whose inventory schema's own code throws", async () => {
    const schema = z.unknown().refine(() => {
      throw new Error('refinement bug');
    });
    await expect(plan(buildpack({ inventory: { schema, gather: async () => ({}) } }), false)).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_FAILED.code,
      details: { buildpack: 'demo', phase: 'schema' },
    });
  });

  it("gives authors the contract's schemas in the kit, which accept a valid part and refuse a broken one", () => {
    expect(kit.PlanContributionSchema.safeParse(webOnlyContribution(['true'], 8080)).success).toBe(true);
    expect(
      kit.PlanContributionSchema.safeParse({ ...webOnlyContribution(['true'], 8080), files: [{ path: '.npmrc', phase: 'build', mode: 0o644, secret: true, content: [], reason: 'x' }] }).success,
    ).toBe(false);
    expect(kit.DetectResultSchema.safeParse({ status: 'pass', evidence: ['x'] }).success).toBe(true);
  });

  it('checks what detect() and plan() return against the contract', async () => {
    const garbage = async () => ({ status: 'maybe' }) as never;
    await expect(plan(buildpack({ detector: { detect: garbage } }))).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_RESULT_INVALID.code,
      reason: expect.stringContaining('status: '),
      details: { buildpack: 'demo', phase: 'detect' },
    });
    const garbagePlan = async () => ({ runtimes: 7 }) as never;
    await expect(plan(buildpack({ planner: { plan: garbagePlan } }))).rejects.toMatchObject({
      code: CoreErrors.BUILDPACK_RESULT_INVALID.code,
      reason: expect.stringMatching(/^buildpack "demo" returned from plan\(\) something that is not its part of a plan: runtimes: Invalid input: expected array, received number; decisions: .*\.$/),
      details: { buildpack: 'demo', phase: 'plan' },
    });
  });
});

describe('a command that can never finish (untilFinished)', () => {
  it('is an error when the process runs out of things to wait for, not an empty success', async () => {
    const events = new EventEmitter();
    const work = untilFinished(never(), events);
    events.emit('beforeExit', 0);
    await expect(work).rejects.toMatchObject({ code: CoreErrors.CLI_UNFINISHED.code, kind: 'deployment' });
    expect(events.listenerCount('beforeExit')).toBe(0);
  });

  it('gives the result of a command that finishes, and stops listening', async () => {
    const events = new EventEmitter();
    await expect(untilFinished(Promise.resolve(0), events)).resolves.toBe(0);
    expect(events.listenerCount('beforeExit')).toBe(0);
  });
});
