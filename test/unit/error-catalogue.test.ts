import { describe, expect, it } from 'vitest';
import { formatPlan } from '../../src/cli/format-plan.js';
import { formatError } from '../../src/cli/output.js';
import { defaultRegistry } from '../../src/compose/default-registry.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { CoreWarnings } from '../../src/errors/core-warnings.js';
import { listDefinitions, RunplanError } from '../../src/errors/runplan-error.js';
import { listWarningDefinitions } from '../../src/errors/warnings.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';

/**
 * The catalogue of what people read for each code, as the CLI renders it: one
 * sample per definition (code, title, kind, fix), the error as `runplan` prints
 * it on stderr and the warning as a plan lists it (the few warnings a build logs —
 * hooks, SSH, Kubernetes — are shown the same way). Any change of wording shows in
 * the review of __snapshots__/error-catalogue.txt; after an intended one:
 * `npx vitest run test/unit/error-catalogue.test.ts -u` (docs/errors.md).
 * Real occurrences, with their own messages, are pinned by the bad-input corpus.
 */
describe('error catalogue', () => {
  it('renders every error and warning code as people see it', async () => {
    const errors = [...listDefinitions(CoreErrors), ...defaultRegistry().errorDefinitions()].map((definition) => {
      const error = new RunplanError(definition, { message: `${definition.title}.` });
      // A bug's report shows its stack, which names this machine's paths.
      error.stack = '    at <stack trace>';
      return `## ${definition.code}\n${definition.title} (${definition.kind})\n\n${formatError(error)}`;
    });

    const { plan } = await createPlan({
      registry: testRegistry(),
      inventory: TEST_PLAN_INVENTORY,
      files: new MemorySource({ 'package.json': '{"main":"server.js"}', '.gitignore': 'node_modules\n' }),
      appDir: '/srv/app',
    });
    const warnings = [...listWarningDefinitions(CoreWarnings), ...defaultRegistry().warningDefinitions()].map((definition) => {
      const shown = formatPlan({ ...plan, warnings: [{ code: definition.code, message: `${definition.title}.`, fix: definition.fix }] }, '/srv/app');
      return `## ${definition.code}\n${definition.title} (warning)\n\n${shown.slice(shown.indexOf('\nWarnings\n') + 1)}\n`;
    });

    await expect([...errors, ...warnings].join('\n')).toMatchFileSnapshot('__snapshots__/error-catalogue.txt');
  });
});
