import { describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli.js';
import { envArgs, listFixtures } from '../helpers/fixtures.js';
import { get } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { processesUnder } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Every fixture app is deployed for real with `runplan run`, then checked over
 * HTTP against the expectations kept beside it (fixtures/<type>/<case>/expect.json).
 */
describe.each(['node'])('%s fixtures', (type) => {
  for (const fixture of listFixtures(type)) {
    it(`${fixture.name}: ${fixture.expect.rule}`, async () => {
      const cache = await tempDir();
      const port = await freePort();
      const run = startCli(['run', fixture.dir, '--port', String(port), ...envArgs(fixture.expect)], { RUNPLAN_CACHE_DIR: cache });
      try {
        if (fixture.expect.deploy === 'fails') {
          const code = await run.exited;
          expect(code, run.output()).toBe(fixture.expect.exitCode ?? 1);
          if (fixture.expect.errorCode) expect(run.stderr()).toContain(fixture.expect.errorCode);
        } else {
          await run.waitFor('==> deployment healthy');
          for (const request of fixture.expect.requests ?? []) {
            const answer = await get(`http://127.0.0.1:${port}${request.path}`, { ...request.headers });
            expect(answer.status, `GET ${request.path}: ${answer.body}`).toBe(request.status);
            if (request.json) expect(JSON.parse(answer.body)).toMatchObject(request.json);
            if (request.bodyIncludes) expect(answer.body).toContain(request.bodyIncludes);
            for (const [name, value] of Object.entries(request.responseHeaders ?? {})) expect(answer.headers[name.toLowerCase()]).toBe(value);
          }
          run.child.kill('SIGINT');
          expect(await run.exited, run.output()).toBe(0);
        }
        for (const line of fixture.expect.output ?? []) expect(run.output()).toContain(line);
        for (const text of fixture.expect.notInOutput ?? []) expect(run.output()).not.toContain(text);
        expect(processesUnder(cache)).toEqual([]);
      } finally {
        if (run.child.exitCode === null) {
          run.child.kill('SIGTERM');
          await run.exited;
        }
      }
    });
  }
});
