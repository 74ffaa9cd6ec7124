// Lines while the setup and the demo work: one before each phase that can take more than a
// few seconds (what it does, and how long it usually takes), then one whenever the phase has
// printed nothing for SILENCE_MS, so that minutes of compiling or downloading never look like a
// hang. The child's own output passes through as it comes.
import { spawn } from 'node:child_process';

/** The longest a phase stays without a new line. */
const SILENCE_MS = 8_000;

/** "45 s", "2 min 05 s". */
export function elapsed(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/**
 * Says `what` is starting (with `detail`, once) and how long it `usually` takes, then a line each
 * time it has been silent for SILENCE_MS. `saw(text)` tells it output came (and whether a line was
 * left open); `stop()` ends it and says how long the phase took.
 */
export function phase(what, usually, detail) {
  const started = Date.now();
  let last = started;
  let openLine = false;
  console.log(`==> ${what}${detail ? `: ${detail}` : ''} (usually ${usually})`);
  const timer = setInterval(() => {
    if (Date.now() - last < SILENCE_MS) return;
    last = Date.now();
    process.stdout.write(`${openLine ? '\n' : ''}    … still ${what}: ${elapsed(last - started)} so far (usually ${usually})\n`);
    openLine = false;
  }, 1_000);
  return {
    saw(text) {
      if (text.length === 0) return;
      last = Date.now();
      openLine = !text.endsWith('\n');
    },
    stop(ok = true) {
      clearInterval(timer);
      if (ok) console.log(`    ${what}: done in ${elapsed(Date.now() - started)}`);
    },
  };
}

/**
 * Runs a program as one phase: its output shown as it comes, the phase's lines around it.
 * Rejects, as execFileSync throws, when it fails.
 */
export function runPhase({ what, detail, usually, command, args, cwd, env = process.env }) {
  const progress = phase(what, usually, detail);
  console.log(`    $ ${command} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['inherit', 'pipe', 'pipe'] });
    const pass = (to) => (chunk) => {
      const text = chunk.toString();
      progress.saw(text);
      to.write(text);
    };
    child.stdout.on('data', pass(process.stdout));
    child.stderr.on('data', pass(process.stderr));
    child.once('error', (error) => {
      progress.stop(false);
      reject(error);
    });
    child.once('close', (code, signal) => {
      progress.stop(code === 0);
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} ${signal ? `was stopped by ${signal}` : `exited with status ${code}`} (${what})`));
    });
  });
}
