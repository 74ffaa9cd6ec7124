import { defineErrors } from '../../src/errors/runplan-error.js';

export const NodeErrors = defineErrors({
  NODE_PACKAGE_JSON_MISSING: {
    title: 'package.json is missing',
    kind: 'input',
    fix: 'Commit a package.json at the root of the application (npm init creates one).',
  },
  NODE_PACKAGE_JSON_INVALID: {
    title: 'package.json cannot be parsed',
    kind: 'input',
    fix: 'Correct the JSON at the position shown (a missing comma or quote, a trailing comma) and commit package.json again.',
  },
  NODE_NO_START_COMMAND: {
    title: 'package.json says neither how to start the application nor which file to run',
    kind: 'input',
    fix: 'Add "scripts": { "start": "node server.js" } or "main": "server.js" to package.json.',
  },
  NODE_MAIN_NOT_FOUND: {
    title: 'The file named by "main" does not exist after the build',
    kind: 'deployment',
    fix: 'Point "main" at a file that is committed or produced by the build (scripts.install), or add scripts.start.',
  },
});
