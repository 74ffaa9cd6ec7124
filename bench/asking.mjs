// Requests through a bench host's edge while it works: one loop that keeps asking one
// application (its latencies make the p99), one that goes round the applications
// that are serving and not being deployed (any failure there is a failure the goal
// counts). Each request is a new HTTPS connection, as a new visitor's.

/**
 * GET / once, sent again once if the connection was reset before any answer: what
 * an HTTP client does for a GET (RFC 9110, 9.2.2), and what the host's own tests
 * allow (Caddy may reset a new connection while it applies a new route, its issue 5589).
 */
async function askOnce(host, appId, tally) {
  try {
    return await host.get(appId, '/');
  } catch (error) {
    if (error.code !== 'ECONNRESET' && !/socket hang up|disconnected before secure TLS/.test(error.message)) throw error;
    tally.resent += 1;
    return host.get(appId, '/');
  }
}

/**
 * Keeps asking, one request after another, until stop(): `pick()` names the next
 * application (or undefined to wait a moment). stop() resolves with how many were
 * sent, their latencies (ms), the failures (app, and status or error) and how many
 * were sent again after a reset.
 */
export function keepAsking(host, pick) {
  let running = true;
  const tally = { sent: 0, ms: [], failed: [], resent: 0 };
  const loop = (async () => {
    while (running) {
      const appId = pick();
      if (appId === undefined) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      tally.sent += 1;
      const started = performance.now();
      try {
        const answer = await askOnce(host, appId, tally);
        tally.ms.push(performance.now() - started);
        if (answer.status !== 200) tally.failed.push(`${appId}: status ${answer.status}`);
      } catch (error) {
        tally.failed.push(`${appId}: ${error.message.trim().split('\n')[0]}`);
      }
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return tally;
    },
  };
}

/** Round and round `ids()`: each call the next one still in it. */
export function roundRobin(ids) {
  let i = 0;
  return () => {
    const list = ids();
    return list.length === 0 ? undefined : list[i++ % list.length];
  };
}

/** Runs `task` over `items`, at most `width` at a time; resolves with the results in order. */
export async function pool(items, width, task) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}
