import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreErrors } from '../errors/core-errors.js';
import { formatSeconds } from '../health/probes.js';
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

/** The stack an application type runs on. */
export function stackForType(type: string): StackDefinition | undefined {
  return STACKS[type];
}

export interface StackOptions {
  readonly log?: (line: string) => void;
  /** Rebuild even when an image with the tag exists. */
  readonly rebuild?: boolean;
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

const STACK_DOCKERFILE = (rootfs: string, stack: StackDefinition) => `FROM ${rootfs}
RUN apt-get update -qq${stack.packages.length > 0 ? ` && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${stack.packages.join(' ')}` : ''} && rm -rf /var/lib/apt/lists/*
RUN useradd --uid 1000 --user-group --create-home --home-dir /home/app --shell /bin/sh app && mkdir -p /app /run/runplan && chown app:app /app /run/runplan
ENV LANG=C.UTF-8
LABEL io.runplan.stack="${stack.name}" io.runplan.stack-packages="${stack.packages.join(' ')}"
`;

/** The tag of a stack image on this machine (it changes with the Debian release, the apt sources and the stack's packages). */
export async function stackImageTag(stack: StackDefinition): Promise<string> {
  const release = await debianRelease();
  const rootfs = rootfsTag(release);
  return `runplan/stack-${stack.name}:${release.codename}-${digest(rootfs, STACK_DOCKERFILE(rootfs, stack))}`;
}

function rootfsTag(release: DebianRelease): string {
  return `runplan/stack-rootfs:${release.codename}-${digest(release.codename, release.sourcesText, ROOTFS_PACKAGES.join(','))}`;
}

async function imageExists(docker: DockerCli, tag: string): Promise<boolean> {
  return (await docker.run(['image', 'inspect', '--format', '{{.Id}}', tag])).code === 0;
}

/**
 * The stack image for `stack`, built when this machine does not have it yet
 * (minutes the first time: mmdebstrap, then apt inside a build; nothing after).
 * Returns its tag.
 */
export async function ensureStackImage(docker: DockerCli, stack: StackDefinition, options: StackOptions = {}): Promise<string> {
  const log = options.log ?? (() => undefined);
  const release = await debianRelease();
  const rootfs = rootfsTag(release);
  const tag = `runplan/stack-${stack.name}:${release.codename}-${digest(rootfs, STACK_DOCKERFILE(rootfs, stack))}`;
  if (!options.rebuild && (await imageExists(docker, tag))) return tag;

  if (options.rebuild || !(await imageExists(docker, rootfs))) {
    const started = Date.now();
    log(`building ${rootfs}: mmdebstrap --variant=minbase ${release.codename} (from ${release.sourceFiles.join(', ')})`);
    await importRootfs(docker, release, rootfs);
    log(`built ${rootfs} in ${formatSeconds(Date.now() - started)}`);
  }
  const started = Date.now();
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
  log(`built ${tag} in ${formatSeconds(Date.now() - started)}`);
  return tag;
}

/** mmdebstrap's minimal root, streamed into `docker import`. */
function importRootfs(docker: DockerCli, release: DebianRelease, tag: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const mm = spawn('mmdebstrap', ['--variant=minbase', '--quiet', `--include=${ROOTFS_PACKAGES.join(',')}`, release.codename, '-', ...release.sourceFiles], { stdio: ['ignore', 'pipe', 'pipe'] });
    const imp = spawn(docker.binary, ['import', '--change', 'CMD ["/bin/sh"]', '-', tag], { stdio: ['pipe', 'ignore', 'pipe'], env: docker.env });
    let errors = '';
    mm.stderr.on('data', (c: Buffer) => (errors += c));
    imp.stderr.on('data', (c: Buffer) => (errors += c));
    mm.stdout.pipe(imp.stdin);
    mm.on('error', (e) =>
      reject(
        CoreErrors.STACK_BUILD_FAILED.create({ message: `mmdebstrap cannot be run (${(e as NodeJS.ErrnoException).code ?? e.message}).`, fix: 'Install mmdebstrap (apt-get install mmdebstrap).' }),
      ),
    );
    let mmCode: number | null = null;
    mm.on('close', (c) => (mmCode = c));
    imp.on('close', (c) => {
      if (mmCode === 0 && c === 0) resolve();
      else reject(CoreErrors.STACK_BUILD_FAILED.create({ message: `building ${tag} failed (mmdebstrap ${mmCode}, docker import ${c}): ${errors.trim().split('\n').slice(-3).join(' ')}` }));
    });
  });
}
