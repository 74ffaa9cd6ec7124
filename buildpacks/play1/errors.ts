import { defineErrors } from '../../src/kit/index.js';

/** Error codes of the Play 1.x buildpack (documented in docs/errors.md). */
export const Play1Errors = defineErrors({
  PLAY1_VERSION_INVALID: {
    title: 'Unknown Play 1.x version',
    kind: 'input',
    fix: 'Set PLAY1_VERSION (or platform/play1_version) to one of the accepted values listed in the message, e.g. PLAY1_VERSION=1.5.',
  },
  PLAY1_ROUTES_MISSING: {
    title: 'conf/application.conf without conf/routes',
    kind: 'input',
    fix: 'Commit conf/routes: Play 1.x refuses to start an application without it.',
  },
  PLAY1_CONF_INVALID: {
    title: 'conf/application.conf cannot be read as a properties file',
    kind: 'input',
    fix: 'Correct the line shown: a backslash followed by u must start a \\uXXXX escape with four hexadecimal digits (write \\\\ for a literal backslash).',
  },
  PLAY1_MIRROR_UNSET: {
    title: 'No Play 1.x download mirror is configured',
    kind: 'input',
    fix: 'Set RUNPLAN_PLAY1_MIRROR (or the mirror option of createPlay1Buildpack) to a URL template such as https://mirror.example/play/{version}/play-{version}.zip.',
  },
  PLAY1_MIRROR_INVALID: {
    title: 'Invalid Play 1.x mirror URL template',
    kind: 'input',
    fix: 'Use an http:, https: or file: URL containing {version} and no user name or password.',
  },
  PLAY1_CHECKSUMS_INVALID: {
    title: 'Invalid Play 1.x checksum table',
    kind: 'input',
    fix: 'Write the table as VERSION=SHA256 pairs separated by commas, spaces or newlines, each checksum being 64 hexadecimal digits.',
  },
  PLAY1_CHECKSUM_UNKNOWN: {
    title: 'No checksum is known for the Play release to download',
    kind: 'input',
    fix: "Add the release's SHA-256 to RUNPLAN_PLAY1_CHECKSUMS (or the checksums option); runplan never installs a framework it cannot verify.",
  },
  PLAY1_JAVA_NOT_FOUND: {
    title: 'No Java runtime found for Play',
    kind: 'deployment',
    fix: 'Install a JDK on the host (e.g. apt-get install default-jdk-headless) or set JAVA_HOME to one.',
  },
  PLAY1_PYTHON_MISSING: {
    title: "The Python the Play series' launcher is written for is missing",
    kind: 'deployment',
    fix: 'Choose Play 1.7 or newer (PLAY1_VERSION=1.11), whose launcher runs on Python 3, or give the host the python2 the older launchers need (Debian 12 has no Python 2 package).',
  },
  PLAY1_PRECOMPILE_NO_OUTPUT: {
    title: '`play precompile` ended without writing precompiled/',
    kind: 'deployment',
    fix: "Read the precompile step's output above: the JVM most likely failed to start (a JVM option or a Java the series does not support); fix it (JAVA_HOME, jvm.memory, PLAY1_VERSION) and build again.",
  },
  PLAY1_JAVA_UNSUPPORTED: {
    title: "The host's Java cannot run the Play series",
    kind: 'deployment',
    fix: 'Install a JDK of the range shown and point JAVA_HOME at it, or choose a Play series made for the Java the host has (PLAY1_VERSION).',
  },
});
