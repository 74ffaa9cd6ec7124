import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { formatSeconds } from '../health/probes.js';
import { runProgram, startProgram } from '../process/run-program.js';
import { type Clock, systemClock } from '../time/clock.js';
import type { StackBindings } from '../buildpack/contract.js';
import type { DockerCli } from './docker-cli.js';
import { hostNetworkBuildArgs } from './host-network.js';

/**
 * Stack images: the operating system and the runtimes a plan does not install
 * itself (Ruby, nginx, Java…), built from this machine's Debian release and apt
 * sources, like the stacks of Heroku or Paketo. The runtimes a plan installs
 * (Node.js, npm, Yarn, Play) come from the plan, into the application image.
 *
 * Every stack starts from a minimal root made with mmdebstrap (with
 * ca-certificates, curl for health checks, tini as PID 1), has a user `app`
 * (uid 1000) that owns /app and /run/runplan, and LANG=C.UTF-8.
 */
export interface StackDefinition {
  readonly name: string;
  /** Debian packages installed on top of the minimal root. */
  readonly packages: readonly string[];
  readonly description: string;
}

const ROOTFS_PACKAGES = ['ca-certificates', 'curl', 'tini', 'passwd'];
/**
 * mmdebstrap's own hooks for a merged /usr (directory links and a stand-in
 * usr-is-merged package), as debootstrap and Debian's images make it: without
 * them apt picks the usrmerge package, which brings Perl (some 50 MB) into every stack.
 */
const MERGED_USR_HOOKS = '/usr/share/mmdebstrap/hooks/merged-usr';

/** mmdebstrap's arguments besides the release and its sources: what the root is made of, part of its tag. */
function rootfsOptions(): string[] {
  return [
    '--variant=minbase',
    `--include=${ROOTFS_PACKAGES.join(',')}`,
    ...ROOTFS_DPKG_OPTIONS.map((o) => `--dpkgopt=${o}`),
    // Older mmdebstraps have no such hooks: their roots keep usrmerge, as before.
    ...(existsSync(MERGED_USR_HOOKS) ? [`--hook-dir=${MERGED_USR_HOOKS}`] : []),
  ];
}

/**
 * What dpkg leaves out of every stack, as Debian's slim images do: manuals, other
 * documentation (each package's copyright excepted) and message translations. Kept
 * in the root (/etc/dpkg/dpkg.cfg.d/), so the stacks' own packages leave them out too.
 */
const ROOTFS_DPKG_OPTIONS = [
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/locale/*',
  'path-include=/usr/share/locale/locale.alias',
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
];
/** The label of an imported root: the tag it was made for. */
const ROOTFS_LABEL = 'io.runplan.stack-rootfs';

export const STACKS: Readonly<Record<string, StackDefinition>> = {
  node: { name: 'node', packages: [], description: 'Node.js applications: the plan installs Node.js, npm and the package manager' },
  ruby: {
    name: 'ruby',
    // Debian's Rails stack: its gems are what a plan with the local gem source installs from (RUNPLAN_RUBY_GEM_SOURCE=local).
    packages: ['ruby', 'bundler', 'ruby-rails', 'puma', 'ruby-sidekiq', 'ruby-redis', 'ruby-sass-rails', 'ruby-byebug', 'ruby-web-console', 'nginx'],
    description: "Ruby on Rails applications: Debian's Ruby, bundler, Rails gems, Puma, Sidekiq and nginx",
  },
  play1: { name: 'play1', packages: ['default-jdk-headless', 'python3'], description: 'Play 1.x applications: a JDK and Python 3 (the plan installs the framework)' },
  proxy: { name: 'proxy', packages: ['nginx'], description: 'the proxy in front of a swarm service: nginx' },
};

/**
 * Where the programs a plan names but does not install are in every stack image
 * (the plan's stack placeholders): Debian's packages put Ruby, bundler and rake
 * in /usr/bin and nginx in /usr/sbin. A `--base` image must keep them there.
 */
export const STACK_IMAGE_PROGRAMS = { RUBY_BIN: '/usr/bin', NGINX_BIN: '/usr/sbin' } as const satisfies StackBindings;

/** The stack an application type runs on. */
export function stackForType(type: string): StackDefinition | undefined {
  return STACKS[type];
}

export interface StackOptions {
  readonly log?: (line: string) => void;
  /** Rebuild even when an image with the tag exists. */
  readonly rebuild?: boolean;
  /** Images are tagged `<repository>/stack-<name>`; default `runplan` (tests use their own, never a machine's images). */
  readonly repository?: string;
  /** The environment mmdebstrap is looked up and run with; default runplan's own. */
  readonly env?: NodeJS.ProcessEnv;
  /** What the build times are read from (default the system's). */
  readonly clock?: Clock;
}

interface DebianRelease {
  readonly codename: string;
  /** apt source files of this machine (one-line or deb822), passed to mmdebstrap as they are. */
  readonly sourceFiles: readonly string[];
  /** Their content, part of every stack's tag. */
  readonly sourcesText: string;
}

async function debianRelease(): Promise<DebianRelease> {
  const osRelease = await readFile('/etc/os-release', 'utf8').catch(() => '');
  const codename = /^VERSION_CODENAME=(\S+)$/m.exec(osRelease)?.[1];
  if (!codename) throw CoreErrors.STACK_BUILD_FAILED.create({ message: "/etc/os-release names no VERSION_CODENAME: stack images are built from this machine's Debian release." });
  const files: string[] = [];
  const main = await readFile('/etc/apt/sources.list', 'utf8').catch(() => '');
  if (main.split('\n').some((l) => /^\s*deb\s/.test(l))) files.push('/etc/apt/sources.list');
  for (const name of (await readdir('/etc/apt/sources.list.d').catch(() => [] as string[])).sort()) {
    if (name.endsWith('.list') || name.endsWith('.sources')) files.push(join('/etc/apt/sources.list.d', name));
  }
  if (files.length === 0)
    throw CoreErrors.STACK_BUILD_FAILED.create({ message: 'this machine has no apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d/): stack images are built from its Debian mirror.' });
  const sourcesText = (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
  return { codename, sourceFiles: files, sourcesText };
}

function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 12);
}

// apt's package lists and its caches (pkgcache.bin, srcpkgcache.bin: some 80 MB) go in the layer that made them; a stack without packages of its own never runs apt.
// The manuals' folder is left empty, not absent: a package's alternatives (the JDK's java.1.gz) need it to exist.
const STACK_DOCKERFILE = (rootfs: string, stack: StackDefinition) => `FROM ${rootfs}
${stack.packages.length > 0 ? `RUN mkdir -p /usr/share/man/man1 && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${stack.packages.join(' ')} && apt-get clean && rm -rf /var/lib/apt/lists/*\n` : ''}RUN useradd --uid 1000 --user-group --create-home --home-dir /home/app --shell /bin/sh app && mkdir -p /app /run/runplan && chown app:app /app /run/runplan
ENV LANG=C.UTF-8
LABEL io.runplan.stack="${stack.name}" io.runplan.stack-packages="${stack.packages.join(' ')}"
`;

/** The tag of a stack image on this machine (it changes with the Debian release, the apt sources and the stack's packages). */
export async function stackImageTag(stack: StackDefinition, options: Pick<StackOptions, 'repository'> = {}): Promise<string> {
  return stackTags(await debianRelease(), stack, options).stack;
}

/** The tag of the minimal root every stack image starts from. */
export async function rootfsImageTag(options: Pick<StackOptions, 'repository'> = {}): Promise<string> {
  return rootfsTag(await debianRelease(), options);
}

function stackTags(release: DebianRelease, stack: StackDefinition, options: Pick<StackOptions, 'repository'>): { rootfs: string; stack: string } {
  const rootfs = rootfsTag(release, options);
  return { rootfs, stack: `${options.repository ?? 'runplan'}/stack-${stack.name}:${release.codename}-${digest(rootfs, STACK_DOCKERFILE(rootfs, stack))}` };
}

function rootfsTag(release: DebianRelease, options: Pick<StackOptions, 'repository'>): string {
  return `${options.repository ?? 'runplan'}/stack-rootfs:${release.codename}-${digest(release.codename, release.sourcesText, ...rootfsOptions())}`;
}

/** A label of a local image; undefined when there is no such image. */
async function imageLabel(docker: DockerCli, ref: string, label: string): Promise<string | undefined> {
  const inspected = await docker.run(['image', 'inspect', '--format', `{{index .Config.Labels ${JSON.stringify(label)}}}`, ref]);
  return inspected.code === 0 ? inspected.stdout.trim() : undefined;
}

/**
 * Whether `ref` is a root a stack can be built on: a shell and the root's programs
 * run in it. An image left by an interrupted or failed import (an empty file
 * system, whose builds fail with "/bin/sh: no such file") is not. Run only when a
 * stack image is to be built, which takes minutes anyway.
 */
async function rootfsUsable(docker: DockerCli, ref: string): Promise<boolean> {
  const probe = await docker.run(['run', '--rm', '--pull', 'never', '--network', 'none', '--entrypoint', '/bin/sh', ref, '-c', 'command -v tini && command -v curl && command -v useradd']);
  return probe.code === 0;
}

/**
 * The stack image for `stack`, built when this machine does not have it yet
 * (minutes the first time: mmdebstrap, then apt inside a build; nothing after).
 * Returns its tag. An image is tagged only once completely built: the root is
 * imported untagged and tagged once mmdebstrap and the import succeeded and a
 * shell runs in it; `docker build -t` tags only a build that succeeded. A tagged
 * root that does not work (left by an older runplan) is untagged and rebuilt.
 * A client that found or built it before in this process takes it as there.
 */
export async function ensureStackImage(docker: DockerCli, stack: StackDefinition, options: StackOptions = {}): Promise<string> {
  const release = await debianRelease();
  const { stack: tag } = stackTags(release, stack, options);
  const known = knownStackImages.get(docker) ?? new Set<string>();
  knownStackImages.set(docker, known);
  if (!options.rebuild && known.has(tag)) return tag;
  await makeStackImage(docker, stack, release, options);
  known.add(tag);
  return tag;
}

/**
 * The stack images each client has found or built in this process. A host builds release after release on the
 * same stack: asking the engine each time is a docker client start (≈ 20 ms of a warm rebuild of ≈ 200 ms). An
 * image removed since (`docker image prune -a`) makes the next build fail; the builder then asks
 * forgetStackImageIfGone and builds the stack again (build-image.ts).
 */
const knownStackImages = new WeakMap<DockerCli, Set<string>>();

/** Whether the stack image `tag` has gone from the engine; if so, the client no longer takes it as there. */
export async function forgetStackImageIfGone(docker: DockerCli, tag: string): Promise<boolean> {
  if ((await imageLabel(docker, tag, 'io.runplan.stack')) !== undefined) return false;
  knownStackImages.get(docker)?.delete(tag);
  return true;
}

async function makeStackImage(docker: DockerCli, stack: StackDefinition, release: DebianRelease, options: StackOptions): Promise<void> {
  const log = options.log ?? (() => undefined);
  const clock = options.clock ?? systemClock;
  const { rootfs, stack: tag } = stackTags(release, stack, options);
  if (!options.rebuild && (await imageLabel(docker, tag, 'io.runplan.stack')) === stack.name) return;

  if (options.rebuild || !(await reusableRootfs(docker, rootfs, log))) {
    const started = clock.now();
    await requireRootfsTools(options.env);
    log(`building ${rootfs}: mmdebstrap --variant=minbase ${release.codename} (from ${release.sourceFiles.join(', ')})`);
    await buildRootfs(docker, release, rootfs, options.env);
    log(`built ${rootfs} in ${formatSeconds(clock.now() - started)}`);
  }
  const started = clock.now();
  log(`building ${tag}: ${stack.description}`);
  const output: string[] = [];
  // `docker build -`: the Dockerfile on standard input, no build context.
  const code = await docker.stream(
    ['build', '--network=host', '--label', 'io.runplan.managed=true', ...hostNetworkBuildArgs(), '-t', tag, '-'],
    (line) => {
      output.push(line);
      log(line);
    },
    { input: STACK_DOCKERFILE(rootfs, stack) },
  );
  if (code !== 0) throw CoreErrors.STACK_BUILD_FAILED.create({ message: `docker build of ${tag} failed (exit status ${code}): ${output.slice(-3).join(' ')}` });
  log(`built ${tag} in ${formatSeconds(clock.now() - started)}`);
}

/** Whether the root is there and works; a tagged root that does not work loses its tag, so that it is never built on. */
async function reusableRootfs(docker: DockerCli, rootfs: string, log: (line: string) => void): Promise<boolean> {
  if ((await docker.run(['image', 'inspect', '--format', '{{.Id}}', rootfs])).code !== 0) return false;
  if (await rootfsUsable(docker, rootfs)) return true;
  log(`${rootfs} is tagged but no shell runs in it (an incomplete build): untagging and rebuilding it`);
  await docker.ok(['image', 'rm', '--force', rootfs]);
  return false;
}

/** Programs that make the root, besides docker, with the Debian package each comes in. */
const ROOTFS_TOOLS = [{ program: 'mmdebstrap', debianPackage: 'mmdebstrap' }] as const;

/** Checked before anything is built: a missing tool is named with its package, and nothing is left half-made. */
async function requireRootfsTools(env: NodeJS.ProcessEnv | undefined): Promise<void> {
  for (const { program, debianPackage } of ROOTFS_TOOLS) {
    if ((await runProgram(program, ['--version'], { env: env ?? process.env, timeoutMs: 60_000 })) !== undefined) continue;
    throw CoreErrors.STACK_TOOL_MISSING.create({
      message: `${program} is not installed (not found on PATH): the stack images' minimal root is made with it. Nothing was built or tagged.`,
      fix: `Install Debian's ${debianPackage} package (apt-get install ${debianPackage}), then run \`runplan stack\` (npm run stack-images) again.`,
      details: { program, package: debianPackage },
    });
  }
}

/**
 * mmdebstrap's minimal root, streamed into `docker import` as an untagged image,
 * tagged only when both succeeded and a shell runs in it; otherwise the untagged
 * image is removed and the failure is RUNPLAN_E_STACK_BUILD_FAILED.
 */
async function buildRootfs(docker: DockerCli, release: DebianRelease, tag: string, env: NodeJS.ProcessEnv | undefined): Promise<void> {
  const imported = await importRootfs(docker, release, tag, env);
  const fail = async (why: string): Promise<never> => {
    if (imported.id) await docker.run(['image', 'rm', imported.id]);
    throw CoreErrors.STACK_BUILD_FAILED.create({ message: `building ${tag} failed (${why}); nothing was tagged.` });
  };
  if (imported.mmdebstrap !== 0 || imported.import !== 0 || !imported.id) {
    await fail(`mmdebstrap ${imported.mmdebstrap}, docker import ${imported.import}: ${imported.errors.trim().split('\n').slice(-3).join(' ')}`);
  }
  if (!(await rootfsUsable(docker, imported.id))) await fail('mmdebstrap succeeded, but no shell runs in the root it made');
  await docker.ok(['tag', imported.id, tag]);
}

interface ImportedRootfs {
  /** The untagged image `docker import` made, if it made one. */
  readonly id: string;
  /** Exit statuses; null for a program ended by a signal, -1 for one that could not start. */
  readonly mmdebstrap: number | null;
  readonly import: number | null;
  readonly errors: string;
}

/** Both programs run to their end, whatever one of them does: the caller decides from both statuses. */
async function importRootfs(docker: DockerCli, release: DebianRelease, tag: string, env: NodeJS.ProcessEnv | undefined): Promise<ImportedRootfs> {
  // Minutes on a slow mirror: no time limit of their own, like the image builds that follow.
  const mm = startProgram('mmdebstrap', ['--quiet', ...rootfsOptions(), release.codename, '-', ...release.sourceFiles], {
    env: env ?? process.env,
    timeoutMs: 0,
    stdoutStream: true,
    keepLast: true,
    maxBufferBytes: IMPORT_ERRORS_KEPT,
  });
  // Labelled with the tag it is made for: an import that is not tagged can still be found (and is removed).
  const imp = startProgram(docker.binary, ['import', '--change', 'CMD ["/bin/sh"]', '--change', `LABEL ${ROOTFS_LABEL}=${tag}`, '-'], {
    env: docker.env,
    timeoutMs: 0,
    input: mm.stdout,
    keepLast: true,
    maxBufferBytes: IMPORT_ERRORS_KEPT,
  });
  const [made, imported] = await Promise.all([mm.done, imp.done]);
  const cannotRun = (name: string, ran: { startError: string | undefined }) => (ran.startError === undefined ? '' : `${name} cannot be run (${ran.startError})\n`);
  return {
    id: imported.stdout.trim(),
    mmdebstrap: made.startError === undefined ? made.exitCode : -1,
    import: imported.startError === undefined ? imported.exitCode : -1,
    errors: made.stderr + cannotRun('mmdebstrap', made) + imported.stderr + cannotRun('docker import', imported),
  };
}

/** What the two programs' errors keep: their last lines are what the failure says. */
const IMPORT_ERRORS_KEPT = 64 * 1024;
