import type { BuildStep, Command } from './schema.js';

export interface DescribeOptions {
  /** Every argument whole: a plan diff must see a change anywhere in an inline script. */
  readonly full?: boolean;
  /**
   * A step whose command holds a script of several lines (the Node.js buildpack's `node -e`
   * checks): by its purpose (the default: what a build log says to the application's owner), or
   * by the script's first line (the printed plan, which shows the purpose on a line of its own).
   */
  readonly inlineScripts?: 'purpose' | 'first-line';
}

/** A command as the user would type it; an argument of several lines (a `node -e` script) as its first line and how many follow, unless `full`. */
export function describeCommand(command: Command, options: DescribeOptions = {}): string {
  if (command.kind !== 'exec') return command.script;
  return command.argv.map((arg) => quoteArg(options.full ? arg : firstLine(arg))).join(' ');
}

function firstLine(arg: string): string {
  const lines = arg.split('\n');
  return lines.length > 1 ? `${lines[0]} … (${lines.length - 1} more lines)` : arg;
}

/** What a build step does, in one line: its command as typed, or its purpose when the command holds a script of several lines. */
export function describeStep(step: BuildStep, options: DescribeOptions = {}): string {
  const run = step.run;
  if (run.kind !== 'install') {
    const inline = run.kind === 'exec' ? run.argv.some((arg) => arg.includes('\n')) : run.script.includes('\n');
    if (inline && !options.full && options.inlineScripts !== 'first-line' && step.description !== '') return `${step.description} (an inline ${run.kind === 'exec' ? run.argv[0] : 'shell'} script)`;
    return describeCommand(run, options);
  }
  const from = run.source.type === 'npm' ? `${run.source.name}@${run.source.version} from the npm registry` : run.source.url;
  return `install ${from} into ${run.target}`;
}

function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+${}-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
