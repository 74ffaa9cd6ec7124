import { createHash } from 'node:crypto';
import { type BuildStep, decide, type Decision, type Layer, placeholder, type PlannedFile } from '../../src/kit/index.js';
import type { InstalledRuby } from './rubies.js';

/** How gems are obtained: from a gem server (bundler's default), or only from gems already installed on the host. */
export type GemSource = 'remote' | 'local';

/** Gems the bundle needs that the host does not provide are installed here (GEM_HOME); it is the cached layer. */
const GEM_HOME_DIR = '.runplan/gems';
const DEFAULT_BUNDLE_WITHOUT = 'development:test';

export interface BundleInput {
  readonly gemfileName: string;
  readonly gemfile: string;
  readonly lockFileName: string;
  readonly lockFile: string;
  readonly ruby: InstalledRuby;
  readonly gemSource: GemSource;
  /** BUNDLE_WITHOUT as set by the application, if it is. */
  readonly without: string | undefined;
}

export interface BundlePlan {
  readonly step: BuildStep;
  readonly layer: Layer;
  readonly files: readonly PlannedFile[];
  /** Variables every Ruby step and process gets (GEM_HOME, BUNDLE_GEMFILE). */
  readonly env: Readonly<Record<string, string>>;
  readonly pathPrepend: readonly string[];
  readonly envDefaults: readonly { name: string; value: string; reason: string }[];
  readonly decision: Decision;
}

/**
 * `bundle install` from the committed lock file (specification, Ruby rule 1 and
 * build phase): frozen (the lock file must match the Gemfile), without the
 * development and test groups, with no bundle `path` so the host's installed
 * gems stay visible. Gems the host lacks go to GEM_HOME inside the build, a
 * layer cached under a key of the lock file, the Gemfile, the Ruby version, the
 * groups left out, the gem source and the host's installed gems: when they are
 * all unchanged, the layer is reused and bundler does not run at all.
 *
 * With `gemSource: 'local'` bundler gets `--local` and never contacts a gem
 * server (gems must be installed on the host, as Debian's are here); otherwise
 * it fetches what is missing from the Gemfile's sources. Nothing else differs.
 */
export function planBundle(input: BundleInput): BundlePlan {
  const without = input.without?.trim() || DEFAULT_BUNDLE_WITHOUT;
  // Absolute for bundler and RubyGems, filled by the executor: the plan names no directory of the machine.
  const appHome = placeholder('APP_HOME');
  const gemHome = `${appHome}/${GEM_HOME_DIR}`;
  const keyInputs = [
    input.lockFileName,
    input.gemfileName,
    `Ruby ${input.ruby.version} (${input.ruby.origin})`,
    `groups left out: ${without}`,
    `gem source: ${input.gemSource}`,
    `installed gems ${input.ruby.gemsFingerprint ?? '(unknown)'}`,
  ];
  const cacheKey = createHash('sha256')
    .update([input.lockFile, input.gemfile, input.ruby.version, input.ruby.origin, without, input.gemSource, input.ruby.gemsFingerprint ?? ''].join('\0'))
    .digest('hex');
  const env = { GEM_HOME: gemHome, BUNDLE_GEMFILE: `${appHome}/${input.gemfileName}` };
  // The chosen Ruby's bindir, where the executor's stack has it: the plan names no directory of the machine.
  const pathPrepend = [`${GEM_HOME_DIR}/bin`, placeholder('RUBY_BIN')];
  return {
    env,
    pathPrepend,
    step: {
      name: 'bundle-install',
      description: `install the gems of ${input.lockFileName} (frozen, without ${without})${input.gemSource === 'local' ? ' from the gems installed on the host' : ''}`,
      run: { kind: 'exec', argv: ['bundle', 'install', ...(input.gemSource === 'local' ? ['--local'] : [])] },
      cwd: '.',
      env: { ...env, BUNDLE_SILENCE_ROOT_WARNING: 'true' },
      pathPrepend: [...pathPrepend],
      layer: 'gems',
    },
    layer: { name: 'gems', path: GEM_HOME_DIR, cacheKey, keyInputs },
    files: [
      {
        path: `${GEM_HOME_DIR}/README`,
        phase: 'build',
        mode: 0o644,
        secret: false,
        content: [{ text: 'GEM_HOME of this build: gems of the bundle that the host does not provide. Cached by runplan.\n' }],
        reason: 'the gem layer exists (and is cached) even when the host provides every gem',
      },
    ],
    envDefaults: [
      { name: 'BUNDLE_FROZEN', value: 'true', reason: 'install exactly what the committed lock file says' },
      { name: 'BUNDLE_WITHOUT', value: without, reason: 'development and test gems are not installed in production' },
    ],
    decision: decide({
      id: 'ruby.bundle',
      subject: 'Bundle install',
      requests: [{ source: 'env BUNDLE_WITHOUT', value: input.without }],
      resolved: `bundle install${input.gemSource === 'local' ? ' --local' : ''} (frozen, without ${without})`,
      reason: `${input.gemSource === 'local' ? 'the host is configured to take gems only from those installed on it (gem source "local")' : 'missing gems are fetched from the sources of the Gemfile (gem source "remote")'}; no bundle path, so the host's installed gems stay visible; gems it lacks go to ${GEM_HOME_DIR}, cached under the lock file, Gemfile, Ruby version, groups and installed gems`,
    }),
  };
}
