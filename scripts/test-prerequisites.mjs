// What the test suite needs beyond npm packages. Each buildpack's issue adds its
// Debian packages here; they are installed only when missing.
import { execFileSync } from 'node:child_process';
import { runPhase } from './progress.mjs';

/**
 * What `npm ci` needs to build native npm packages (better-sqlite3 for runplan-host;
 * fixtures/node/native-module and the real apps' sqlite3 in the tests): node-gyp compiles
 * with make and g++ and runs python3. Debian 12 as installed has none of them.
 */
export const BUILD_TOOLS = [
  { name: 'python3', command: 'python3' },
  { name: 'make', command: 'make' },
  { name: 'g++', command: 'g++' },
];

/**
 * What runplan-host runs to serve applications: git pushes over sshd, the HTTPS edge (and curl, to
 * try it), and each application's walls. `npm run demo` installs these and nothing else: it makes no add-on.
 */
export const HOST_PACKAGES = [
  { name: 'curl', command: 'curl' },
  { name: 'git', command: 'git' },
  { name: 'openssh-client', command: 'ssh-keygen' },
  { name: 'openssh-server', command: 'test -x /usr/sbin/sshd' },
  // The HTTPS edge: the host runs its own Caddy. Debian's package also enables a caddy.service
  // (ports 80/443, admin localhost:2019); it starts only where systemd runs (not here, and policy-rc.d refuses it).
  { name: 'caddy', command: 'caddy' },
  // Each application in its walls (src/sandbox/): bubblewrap's namespaces; setpriv is util-linux's, on every Debian.
  { name: 'bubblewrap', command: 'test -x /usr/bin/bwrap' },
  // A release's loopback port closed to the other applications' users (host/src/tenancy/loopback-guard.ts).
  { name: 'nftables', command: 'test -x /usr/sbin/nft' },
  // The releases' processes kept by s6-supervise, apart from serve: they outlive it (src/supervision/).
  { name: 's6', command: 'test -x /usr/bin/s6-svscan' },
  // Each application's own disk (diskMb): an ext4 image made with mkfs.ext4, mounted with util-linux's mount (src/sandbox/app-disk.ts).
  { name: 'e2fsprogs', command: 'test -x /usr/sbin/mkfs.ext4 && test -x /usr/sbin/resize2fs' },
  // Each release's own network (releaseNetwork own, init's default): ip netns, veth pairs and a bridge (src/sandbox/release-network.ts).
  { name: 'iproute2', command: 'test -x /usr/sbin/ip || test -x /usr/bin/ip' },
];

/**
 * runplan-host's add-ons: the host makes its own PostgreSQL cluster with Debian's initdb
 * (/usr/lib/postgresql/<major>/bin, whichever major Debian ships), runs one redis-server per Redis
 * add-on, and makes one Ceph cluster whose S3 gateway serves the storage add-ons
 * (host/src/addons/); a host that offers them needs these (docs/host.md, Add-ons).
 */
export const ADDON_PACKAGES = [
  { name: 'postgresql', command: 'ls /usr/lib/postgresql/*/bin/initdb' },
  { name: 'redis-server', command: 'redis-server' },
  // Ceph without its manager (the gateway serves without one): on a bare Debian 12, 62 packages,
  // 61 MB to download, 269 MB installed, 1-2 min. ceph-common (the ceph and radosgw-admin tools) comes with them.
  { name: 'ceph-mon', command: 'test -x /usr/bin/ceph-mon && test -x /usr/bin/monmaptool' },
  { name: 'ceph-osd', command: 'test -x /usr/bin/ceph-osd' },
  { name: 'radosgw', command: 'test -x /usr/bin/radosgw && test -x /usr/bin/radosgw-admin' },
];

/** Debian packages the tests need, each with a command that succeeds only when it is installed. */
export const DEBIAN_PACKAGES = [
  ...BUILD_TOOLS,
  // Ruby buildpack: the interpreter, bundler, Rails, the servers it runs, and the
  // gems `rails new` applications need in their development group (bundler
  // resolves every group of the lock file, even those it does not install).
  { name: 'ruby', command: 'ruby' },
  { name: 'bundler', command: 'bundle' },
  { name: 'ruby-rails', command: 'rails' },
  { name: 'puma', command: 'puma' },
  { name: 'ruby-sidekiq', command: 'sidekiq' },
  { name: 'ruby-redis', command: 'ruby -e "require %q(redis)"' },
  // runplan-host's Active Storage proof (fixtures/host/rails-storage): S3 through the storage add-on, its tables in the PostgreSQL add-on.
  { name: 'ruby-aws-sdk-s3', command: 'ruby -e "require %q(aws-sdk-s3)"' },
  { name: 'ruby-pg', command: 'ruby -e "require %q(pg)"' },
  { name: 'ruby-sass-rails', command: 'ruby -e "require %q(sass-rails)"' },
  { name: 'ruby-byebug', command: 'byebug' },
  { name: 'ruby-web-console', command: 'ruby -e "require %q(web-console)"' },
  { name: 'nginx', command: 'nginx' },
  // redis-server (Sidekiq's fixtures) comes with ADDON_PACKAGES below.
  // Play 1.x: the stand-in framework is compiled with javac (and jar) and run with java; its launcher is Python 3 (BUILD_TOOLS), like Play's.
  { name: 'default-jdk-headless', command: 'javac' },
  // Engines: Docker (Debian's client builds with BuildKit), stack images from Debian packages
  // (mmdebstrap), OCI layouts (skopeo), Kubernetes manifests run for real by podman; the test
  // engine gets its own bridge (iproute2).
  { name: 'docker.io', command: 'test -x /usr/bin/docker && command -v dockerd' },
  { name: 'mmdebstrap', command: 'mmdebstrap' },
  { name: 'skopeo', command: 'skopeo' },
  { name: 'podman', command: 'podman' },
  { name: 'catatonit', command: 'test -x /usr/libexec/podman/catatonit || command -v catatonit' },
  // podman kube play gives its pods a network with slirp4netns.
  { name: 'slirp4netns', command: 'slirp4netns' },
  { name: 'iproute2', command: 'ip' },
  // The image's health-check script is also run on this machine by the tests (curl: HOST_PACKAGES).
  // Private SSH key (CC_SSH_PRIVATE_KEY): git dependencies over SSH from a real sshd on 127.0.0.1 (test/helpers/sshd.ts).
  // runplan-host's console is tested in Debian's chromium (driven by playwright-core, no browser download),
  // which trusts the edge's root certificate through an NSS database made with certutil.
  { name: 'chromium', command: 'test -x /usr/bin/chromium' },
  { name: 'libnss3-tools', command: 'certutil' },
  // runplan-host install-service's unit is checked by systemd's own parser (host/test/service-unit.test.ts);
  // installing the package starts nothing where systemd is not PID 1.
  { name: 'systemd', command: 'systemd-analyze' },
  // runplan-host's ACME certificates (host/test/acme-certificates.test.ts): a real ACME server, Let's Encrypt's pebble, with
  // pebble-challtestsrv as its DNS; openssl makes the certificate of pebble's own HTTPS directory.
  { name: 'pebble', command: 'test -x /usr/bin/pebble && test -x /usr/bin/pebble-challtestsrv' },
  { name: 'openssl', command: 'openssl' },
  ...HOST_PACKAGES,
  ...ADDON_PACKAGES,
];

function present(command) {
  try {
    // A bare program name is looked up on PATH; anything longer is run as a check.
    execFileSync('sh', ['-c', /\s/.test(command) ? command : `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function ensureTestPrerequisites() {
  await ensureDebianPackages(DEBIAN_PACKAGES, 'for all of them, about 1.3 GB installed: 3-6 min');
}

/**
 * Installs those of `packages` that are missing, with apt-get (as root, or through sudo); `usually`
 * says how long that takes when all are missing (apt-get -qq prints nothing while it downloads).
 */
export async function ensureDebianPackages(packages, usually = '1 min') {
  const missing = packages.filter((p) => !present(p.command)).map((p) => p.name);
  if (missing.length === 0) return;
  const asRoot = process.getuid?.() === 0 ? [] : ['sudo'];
  const apt = (what, detail, time, ...args) => {
    const [command, ...rest] = [...asRoot, 'apt-get', ...args];
    return runPhase({ what, detail, usually: time, command, args: rest, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  };
  await apt("reading Debian's package lists", '', '5-30 s', 'update', '-qq');
  await apt('installing Debian packages', missing.join(' '), usually, 'install', '-y', '-qq', '--no-install-recommends', ...missing);
}
