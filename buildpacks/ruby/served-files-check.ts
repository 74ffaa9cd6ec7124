import { type BuildStep, CoreErrors, failureRule, quoteExcerpt } from '../../src/kit/index.js';
import { escapeRegex } from './nginx-values.js';

/** What SERVED_FILES_SCRIPT prints before a path that leads outside (matched by the step's onFailure rules). */
const OUTSIDE = 'outside the application:';

/**
 * Fails (exit 2) when one of its arguments, or a link below one, resolves outside
 * the build directory. The copy of the application keeps its links, so the
 * check planning made on the application is made again where nginx serves from;
 * nginx itself refuses links there too (disable_symlinks).
 */
const SERVED_FILES_SCRIPT = [
  'root=$(realpath .) || exit 1',
  // The mark is printed from two quoted halves: an image build echoes the script, which must not match the rule.
  `check() { r=$(realpath -e -- "$2" 2>/dev/null) || return 0; case "$r" in "$root"/*) ;; *) echo "${OUTSIDE.slice(0, 7)}""${OUTSIDE.slice(7)} $1"; exit 2 ;; esac; }`,
  'for p in "$@"; do',
  '  check "$p" "$p"',
  '  if [ -d "$p" ]; then find "$p" -type l | while IFS= read -r l; do check "$p" "$l"; done || exit 2; fi',
  'done',
].join('\n');

/** The build step that checks the static directory and the error pages nginx will serve (paths relative to the application). */
export function servedFilesStep(paths: readonly string[]): BuildStep {
  return {
    name: 'served-files-check',
    description: `check that what nginx serves (${paths.join(', ')}) stays inside the application once links are followed`,
    run: { kind: 'exec', argv: ['sh', '-c', SERVED_FILES_SCRIPT, 'sh', ...paths] },
    cwd: '.',
    env: {},
    pathPrepend: [],
    layer: null,
    onFailure: paths.map((path) =>
      failureRule(
        CoreErrors.APP_PATH_OUTSIDE,
        { kind: 'output', pattern: `^${escapeRegex(`${OUTSIDE} ${path}`)}$` },
        {
          message: `${quoteExcerpt(path)}, which nginx serves, is or holds a symbolic link leading outside the application.`,
          file: path,
          fix: 'Commit the files themselves instead of symbolic links to files elsewhere, or serve another directory.',
        },
      ),
    ),
  };
}
