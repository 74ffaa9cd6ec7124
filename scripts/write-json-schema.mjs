#!/usr/bin/env node
// Regenerates docs/plan.schema.json from the zod schema (a test fails when they differ).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from './bootstrap.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await ensureBuilt();
const { runPlanJsonSchema } = await import(join(root, 'dist', 'index.js'));
writeFileSync(join(root, 'docs', 'plan.schema.json'), `${JSON.stringify(runPlanJsonSchema(), null, 2)}\n`);
console.log('wrote docs/plan.schema.json');
