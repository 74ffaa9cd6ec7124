import { lineExcerpt } from './excerpt.js';

/** How many problems of one document a message lists; the rest are counted. */
const MAX_LISTED_ISSUES = 10;
const ISSUE_PATH_MAX_CHARS = 120;
const ISSUE_MESSAGE_MAX_CHARS = 200;

/** A schema's finding, as zod reports it (and any validator could). */
export interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * The problems of a document for a message, bounded whatever the document: the
 * first MAX_LISTED_ISSUES as `path: problem` (each path and problem cut and
 * escaped, since both may quote the document's own keys), then how many more
 * there are. A plan of 100,000 invalid steps gives one short line, not 50 MB.
 */
export function listIssues(issues: readonly Issue[], max = MAX_LISTED_ISSUES): string {
  const shown = issues.slice(0, max).map((issue) => {
    const path = issue.path.map((key) => String(key)).join('.');
    return `${lineExcerpt(path === '' ? '(the whole document)' : path, ISSUE_PATH_MAX_CHARS)}: ${lineExcerpt(issue.message, ISSUE_MESSAGE_MAX_CHARS)}`;
  });
  const more = issues.length - shown.length;
  return `${shown.join('; ')}${more > 0 ? `; and ${more} more problem${more === 1 ? '' : 's'}` : ''}`;
}
