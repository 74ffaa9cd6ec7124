import { execFile } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { renderHealthcheck } from '../../src/engines/image/scripts.js';
import { pathAnswers } from '../../src/engines/swarm/converge.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The Swarm engine reads back what the image's health check printed (Swarm ran
 * it) to report a failed check with the gate's own lines: the words the script
 * prints and the words the engine parses are checked together, on the real script.
 */
describe('health check answers read back from the image health check', () => {
  it('reads each path that answered another status than 200 from what the generated script printed', async () => {
    const server = createServer((req, res) => {
      res.statusCode = req.url === '/health' ? 500 : 200;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const plan = { healthCheck: { kind: 'http', port, paths: [{ path: '/' }, { path: '/health' }], requestTimeoutMs: 5_000 } } as unknown as RunPlan;
    const script = join(await tempDir(), 'healthcheck');
    await writeFile(script, renderHealthcheck(plan));
    await chmod(script, 0o755);
    const said = await promisify(execFile)(script).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    server.close();
    expect(said.trim()).toBe('healthcheck: GET /health answered 500, not 200');
    expect(pathAnswers([said.trim()])).toEqual([{ path: '/health', status: 500, ok: false }]);
  });

  it('takes each path once, and nothing from a check that got no answer', () => {
    expect(pathAnswers(['healthcheck: GET /health answered 503, not 200', 'healthcheck: GET /health answered 503, not 200', 'healthcheck: GET /ready got no answer within 5 s (curl exit 7)'])).toEqual(
      [{ path: '/health', status: 503, ok: false }],
    );
  });
});
