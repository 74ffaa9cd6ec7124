import { CoreErrors } from '../errors/core-errors.js';
import { PLACEHOLDERS, type BuildStep, type Placeholder, type PlannedProcess, type Readiness, type StackPlaceholder } from './schema.js';

/** The values an executor gives the plan's placeholders (docs/plan.md, "Placeholders"). */
export type Bindings = Readonly<Partial<Record<Placeholder, string>>>;

const TOKEN = new RegExp(`\\$\\{(${PLACEHOLDERS.join('|')})\\}`, 'g');

/** `text` with every `${APP_HOME}` / `${RUN_DIR}` replaced; a placeholder without a value is an error of the executor. */
export function fillPlaceholders(text: string, bindings: Bindings): string {
  return text.replace(TOKEN, (_, name: Placeholder) => {
    const value = bindings[name];
    if (value === undefined) throw CoreErrors.PLAN_INVALID.create({ message: `the plan uses \${${name}}, which this executor does not provide here.` });
    return value;
  });
}

const fillRecord = (record: Readonly<Record<string, string>>, b: Bindings) => Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fillPlaceholders(v, b)]));

/** A build step ready to run: placeholders filled in argv, cwd, env and PATH additions (never in shell scripts). */
export function bindStep(step: BuildStep, b: Bindings): BuildStep {
  return {
    ...step,
    run: step.run.kind === 'exec' ? { ...step.run, argv: step.run.argv.map((a) => fillPlaceholders(a, b)) } : step.run,
    cwd: fillPlaceholders(step.cwd, b),
    env: fillRecord(step.env, b),
    pathPrepend: step.pathPrepend.map((p) => fillPlaceholders(p, b)),
  };
}

/** A process ready to start, likewise; its readiness sockets too. */
export function bindProcess(proc: PlannedProcess, b: Bindings): PlannedProcess {
  const bindReadiness = (r: Readiness): Readiness => (r.kind === 'tcp-port' ? r : { ...r, socket: fillPlaceholders(r.socket, b) });
  return {
    ...proc,
    command: proc.command.kind === 'exec' ? { ...proc.command, argv: proc.command.argv.map((a) => fillPlaceholders(a, b)) } : proc.command,
    cwd: fillPlaceholders(proc.cwd, b),
    env: fillRecord(proc.env, b),
    pathPrepend: proc.pathPrepend.map((p) => fillPlaceholders(p, b)),
    ...(proc.startAfter ? { startAfter: proc.startAfter.map(bindReadiness) } : {}),
  };
}

/**
 * Splits text rendered with placeholder tokens into file chunks, so that a
 * generated file (an nginx configuration, say) names the application's directory
 * without the plan holding an absolute path.
 */
export function textChunks(text: string): ({ text: string } | { placeholder: Placeholder })[] {
  const chunks: ({ text: string } | { placeholder: Placeholder })[] = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    if (m.index > last) chunks.push({ text: text.slice(last, m.index) });
    chunks.push({ placeholder: m[1] as Placeholder });
    last = m.index + m[0].length;
  }
  if (last < text.length || chunks.length === 0) chunks.push({ text: text.slice(last) });
  return chunks;
}

/** Absolute directories of one host (or image) for the stack placeholders, e.g. `{ RUBY_BIN: '/usr/bin' }`. */
export type StackBindings = Readonly<Partial<Record<StackPlaceholder, string>>>;
