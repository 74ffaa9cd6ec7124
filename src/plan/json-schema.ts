import { z } from 'zod';
import { PLAN_SCHEMA_VERSION, RunPlanSchema } from './schema.js';

/** The run plan's JSON Schema (draft 2020-12), generated from the zod schema so the two cannot drift. */
export function runPlanJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(RunPlanSchema, { target: 'draft-2020-12' }),
    $id: `urn:runplan:run-plan:v${PLAN_SCHEMA_VERSION}`,
    title: 'runplan run plan',
  };
}
