import type { BuildStep, Command } from './schema.js';

/** A command as the user would type it. */
export function describeCommand(command: Command): string {
  return command.kind === 'exec' ? command.argv.map(quoteArg).join(' ') : command.script;
}

/** What a build step does, in one line. */
export function describeStep(step: BuildStep): string {
  const run = step.run;
  if (run.kind !== 'install') return describeCommand(run);
  const from = run.source.type === 'npm' ? `${run.source.name}@${run.source.version} from the npm registry` : run.source.url;
  return `install ${from} into ${run.target}`;
}

function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+${}-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
