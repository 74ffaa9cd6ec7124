import { z } from 'zod';
import { isRunplanError, type RunplanError } from '../errors/runplan-error.js';
import {
  BuildStepSchema,
  DecisionSchema,
  EnvOverridesSchema,
  HealthCheckSchema,
  LayerSchema,
  PathPrependSchema,
  PlannedFileSchema,
  ProcessSchema,
  RuntimeSchema,
  WarningSchema,
} from '../plan/schema.js';

/**
 * What a buildpack's code returns, as data the core checks before it uses any
 * of it: a host's buildpack is code runplan loads, and what it returns must be
 * what the contract (contract.ts) says, whichever language or bundler made it.
 */
export const DetectResultSchema = z.object({
  status: z.enum(['pass', 'skip', 'error']),
  evidence: z.array(z.string()),
  error: z.custom<RunplanError>((value) => isRunplanError(value), 'must be a coded error (defineErrors)').optional(),
});

const DefaultHealthCheckSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('port'), reason: z.string() }),
  z.object({ kind: z.literal('http'), paths: z.array(z.string()).min(1), reason: z.string() }),
]);

/** A buildpack's part of the plan (PlanContribution), checked with the plan's own schemas. */
export const PlanContributionSchema = z.object({
  runtimes: z.array(RuntimeSchema),
  decisions: z.array(DecisionSchema),
  steps: z.array(BuildStepSchema),
  layers: z.array(LayerSchema),
  processes: z.array(ProcessSchema),
  files: z.array(PlannedFileSchema),
  warnings: z.array(WarningSchema),
  hookPoints: z.object({ dependencies: z.string().optional(), checks: z.string().optional() }).optional(),
  userCommands: z.object({ env: EnvOverridesSchema, pathPrepend: PathPrependSchema }).optional(),
  buildCommands: z.object({ env: EnvOverridesSchema, pathPrepend: PathPrependSchema }).optional(),
  envDefaults: z.array(z.object({ name: z.string(), value: z.string(), reason: z.string() })).optional(),
  defaultHealthCheck: DefaultHealthCheckSchema.optional(),
  healthTiming: HealthCheckSchema.pick({ readyTimeoutMs: true, requestTimeoutMs: true, retryDelayMs: true }).partial().optional(),
  sshGitDependencies: z.array(z.object({ name: z.string(), url: z.string(), file: z.string() })).optional(),
});
