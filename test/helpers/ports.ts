import { createServer } from 'node:net';

// Below the kernel's ephemeral range (32768–60999 on Debian), which nothing that
// binds port 0 or connects out can take: a port handed out here stays free
// until the test binds it, unless this worker's own processes take it.
const FIRST_PORT = 10_000;
const PORTS_PER_WORKER = 2_500;
const WORKERS = 8;

// Each test worker (VITEST_POOL_ID 1, 2, …) has a range of its own, so the
// other worker's servers never take a port this one found free.
const worker = (Number(process.env.VITEST_POOL_ID ?? '1') - 1) % WORKERS;
const rangeStart = FIRST_PORT + Math.max(0, worker) * PORTS_PER_WORKER;
// A random start: the test files one worker runs one after another each load this module again.
let next = Math.floor(Math.random() * PORTS_PER_WORKER);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port nothing listens on right now, from this test worker's own range. */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < PORTS_PER_WORKER; tried += 1) {
    const port = rangeStart + (next % PORTS_PER_WORKER);
    next += 1;
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${rangeStart}–${rangeStart + PORTS_PER_WORKER - 1}`);
}
