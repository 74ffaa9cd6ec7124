import { main } from './main.js';

// The program (dist/cli.js): it runs whatever path started it — node host/dist/cli.js, npm's link
// node_modules/.bin/runplan-host, a global install's bin folder — since this module is only ever run.
main(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`internal error: ${String((error as Error)?.stack ?? error)}\n`);
    process.exitCode = 70;
  },
);
