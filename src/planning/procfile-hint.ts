import { CoreWarnings } from '../errors/core-warnings.js';
import { assignmentExcerpt, lineExcerpt } from '../errors/excerpt.js';
import type { Warning } from '../errors/warnings.js';

/** One process line of a Procfile: `<type>: <command>`. */
export interface ProcfileEntry {
  readonly type: string;
  readonly command: string;
}

// Heroku's process types: letters, digits, "_" and "-".
const LINE = /^([A-Za-z0-9_-]+):[ \t]*(.*)$/;

/** Lines advised on at most: a hostile Procfile of 100,000 lines still gives a short warning. */
const MAX_ADVISED = 10;

/**
 * The process lines of a Procfile, read leniently: blank lines, `#` comments
 * and anything that is not `<type>: <command>` are skipped, since a buildpack
 * that does not run the Procfile only reads it to say what it would have meant.
 */
export function procfileEntries(text: string): ProcfileEntry[] {
  const entries: ProcfileEntry[] = [];
  const seen = new Set<string>();
  for (const raw of text.split(/\r?\n/)) {
    const match = LINE.exec(raw.trim());
    const type = match?.[1] ?? '';
    const command = match?.[2]?.trim() ?? '';
    if (match && command !== '' && !seen.has(type)) {
      seen.add(type);
      entries.push({ type, command });
    }
  }
  return entries;
}

/** How a buildpack that does not read the Procfile starts the application, to tell what each line would have meant. */
export interface ProcfileReader {
  /** The buildpack's id, for the message ("node"). */
  readonly buildpack: string;
  /** What the buildpack starts as the web process instead ("npm start"). */
  readonly webCommand: string;
  /** Whether the web line means what already runs (`npm start` when scripts.start is what starts it). */
  readonly webMatches: (command: string) => boolean;
  /** The variable that makes the web line run, when the buildpack has one (Node.js: CC_RUN_COMMAND). */
  readonly webVariable?: string;
  /** The application's variable of that name, or undefined: a line a variable already says gets no advice. */
  readonly variable: (name: string) => string | undefined;
  /** The names of the application's variables (to find the CC_WORKER_COMMAND… already set). */
  readonly variableNames: readonly string[];
  /** The buildpack's own meaning of a line, before the generic one (Ruby: a sidekiq line is CC_ENABLE_SIDEKIQ=true); null: nothing to advise. */
  readonly advise?: (entry: ProcfileEntry) => string | null | undefined;
}

const WORKER = /^CC_WORKER_COMMAND(?:_(\d+))?$/;

/**
 * The warning that a Procfile is not read (PROCFILE_IGNORED), with the variables
 * its lines mean: `web` → the buildpack's run-command variable, `release` →
 * CC_PRE_RUN_HOOK, any other type → CC_WORKER_COMMAND[_<n>]; or undefined when
 * there is no Procfile, or when the application's variables already say what
 * each line says. Pure: the Procfile's text and the reader in, the warning out.
 */
export function procfileIgnored(text: string | undefined, reader: ProcfileReader): Warning | undefined {
  if (text === undefined) return undefined;
  const entries = procfileEntries(text);
  const workers = reader.variableNames.filter((name) => WORKER.test(name));
  const workerValues = workers.map((name) => reader.variable(name)?.trim());
  // A new worker takes CC_WORKER_COMMAND when free, then numbers above those the application uses.
  let bareUsed = workers.includes('CC_WORKER_COMMAND');
  let number = Math.max(0, ...workers.map((name) => Number(WORKER.exec(name)?.[1] ?? 0)));
  const workerVariable = () => {
    if (!bareUsed) {
      bareUsed = true;
      return 'CC_WORKER_COMMAND';
    }
    number += 1;
    return `CC_WORKER_COMMAND_${number}`;
  };

  const ignored: string[] = [];
  const advice: string[] = [];
  let unread = 0;
  for (const entry of entries) {
    // Past the lines a warning names, the others are only counted.
    if (ignored.length >= MAX_ADVISED) {
      unread++;
      continue;
    }
    const said = (name: string) => reader.variable(name)?.trim() === entry.command;
    let meaning: string | null | undefined;
    if (entry.type === 'web') {
      if (reader.webMatches(entry.command) || (reader.webVariable !== undefined && said(reader.webVariable))) continue;
      meaning = reader.webVariable === undefined ? null : assignmentExcerpt(reader.webVariable, entry.command);
    } else {
      meaning = reader.advise?.(entry);
      if (meaning === undefined && entry.type === 'release') meaning = said('CC_PRE_RUN_HOOK') ? null : assignmentExcerpt('CC_PRE_RUN_HOOK', entry.command);
      if (meaning === undefined) meaning = workerValues.includes(entry.command) ? null : assignmentExcerpt(workerVariable(), entry.command);
      if (meaning === null) continue;
    }
    ignored.push(`${entry.type} (${lineExcerpt(entry.command)})`);
    if (meaning !== null) advice.push(meaning);
  }
  if (ignored.length === 0) return undefined;

  const shown = unread > 0 ? [...ignored, `and ${unread} more`] : ignored;
  const procfileBuildpack = "deploy it with the Procfile buildpack of runplan's kit instead (examples/procfile-buildpack: runplan run <app> --buildpack <its path>), which runs each line as it is";
  return CoreWarnings.PROCFILE_IGNORED.create({
    message: `the ${reader.buildpack} buildpack does not read the Procfile: it starts the web process with ${lineExcerpt(reader.webCommand)}, and these lines do not run: ${shown.join(', ')}.`,
    file: 'Procfile',
    fix: advice.length > 0 ? `Set ${advice.join(' and ')}; or ${procfileBuildpack}.` : `To run the Procfile's web line, ${procfileBuildpack}.`,
  });
}
