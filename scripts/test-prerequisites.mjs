// What the test suite needs beyond npm packages. Each buildpack's issue adds its
// Debian packages here; they are installed only when missing.
import { execFileSync } from 'node:child_process';

/** Debian packages the tests need, each with the command that proves it is installed. */
export const DEBIAN_PACKAGES = [
  // Play 1.x: the stand-in framework is compiled with javac (and jar) and run with java; its launcher is Python 3, like Play's.
  { name: 'default-jdk-headless', command: 'javac' },
  { name: 'python3', command: 'python3' },
];

function present(command) {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function ensureTestPrerequisites() {
  const missing = DEBIAN_PACKAGES.filter((p) => !present(p.command)).map((p) => p.name);
  if (missing.length === 0) return;
  const asRoot = process.getuid?.() === 0 ? [] : ['sudo'];
  const apt = (...args) => {
    const [cmd, ...rest] = [...asRoot, 'apt-get', ...args];
    console.log(`==> ${cmd} ${rest.join(' ')}`);
    execFileSync(cmd, rest, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  };
  apt('update', '-qq');
  apt('install', '-y', '-qq', '--no-install-recommends', ...missing);
}
