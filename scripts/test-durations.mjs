// Writes test/durations.json from the output of a full run (bash .ci/run 2>&1 | tee run.log):
// each test file's seconds, which vitest.config.ts's sequencer reads to start the longest files first.
// Usage: node scripts/test-durations.mjs run.log
import { readFileSync, writeFileSync } from 'node:fs';

const [log] = process.argv.slice(2);
if (!log) {
  console.error('usage: node scripts/test-durations.mjs <output of a full test run>');
  process.exit(2);
}
const text = readFileSync(log, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const seconds = {};
for (const match of text.matchAll(/^ [✓×❯] ((?:test|host)\/\S+\.test\.ts) .* (\d+)ms$/gm)) seconds[match[1]] = Math.round(Number(match[2]) / 1000);
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)));
writeFileSync(new URL('../test/durations.json', import.meta.url), `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
