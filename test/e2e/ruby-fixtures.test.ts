import { describe, expect, it } from 'vitest';
import { checkFixture, listFixtures } from '../helpers/fixtures.js';
import { startRedis } from '../helpers/redis.js';

/**
 * Every Ruby fixture app is deployed for real with `runplan run` (Debian's ruby,
 * bundler, Puma, nginx, Sidekiq), then checked over HTTP against the
 * expectations kept beside it (fixtures/ruby/<case>/expect.json). Fixtures that
 * need Redis get their own redis-server, whose address reaches the application
 * as an add-on variable ({{REDIS_PORT}} in expect.json).
 */
describe('ruby fixtures', () => {
  // A fixture with a `setup` needs a test environment only its own test file provides (test/e2e/ssh-key.test.ts).
  for (const fixture of listFixtures('ruby').filter((f) => f.expect.setup === undefined)) {
    it(`${fixture.name}: ${fixture.expect.rule}`, async () => {
      const redis = fixture.expect.services?.includes('redis') ? await startRedis() : undefined;
      try {
        // This machine has no gem server: gems come from Debian's packages.
        await checkFixture(fixture, {
          placeholders: redis ? { REDIS_PORT: String(redis.port) } : {},
          hostEnv: { RUNPLAN_RUBY_GEM_SOURCE: 'local' },
          // nginx's master and workers run as the user Puma runs as, never as root (docs/security.md).
          whileRunning: (processes) => {
            const nginx = processes.filter((p) => p.name === 'nginx');
            const puma = processes.find((p) => /puma|ruby/.test(p.name));
            expect(nginx.length, JSON.stringify(processes)).toBeGreaterThanOrEqual(2);
            expect(nginx.filter((p) => p.uid === 0)).toEqual([]);
            if (puma) expect(new Set(nginx.map((p) => p.uid))).toEqual(new Set([puma.uid]));
          },
        });
      } finally {
        await redis?.stop();
      }
    });
  }
});
