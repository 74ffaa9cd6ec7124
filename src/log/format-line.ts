import type { LogLine } from './logger.js';

/** A line for people, as runplan's CLI prints it: `==> ` for runplan's own, `[step]` for a build step's, `web | ` for a process's. */
export function formatLogLine(line: LogLine): string {
  switch (line.origin.kind) {
    case 'runplan':
      return `==> ${line.level === 'info' ? '' : `${line.level}: `}${line.text}`;
    case 'step':
      return `[${line.origin.name}] ${line.text}`;
    case 'process':
      return `${line.origin.name} | ${line.text}`;
    case 'health':
      return line.text;
  }
}
