import { execFile } from 'node:child_process';
import { chmod, chown, copyFile, cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeTestUser, type TestUser } from '../helpers/app-users.js';
import { ROOT } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { tempDir } from '../helpers/temp.js';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** What a user's shell has that the example needs: where programs are, and how this machine reaches the network (its trust and proxies). */
function userEnvironment(home: string): Record<string, string> {
  const machine = Object.entries(process.env).filter(
    (entry): entry is [string, string] => entry[1] !== undefined && /^(PATH|LANG|TZ|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|no_proxy|HTTPS?_PROXY|NO_PROXY)$/.test(entry[0]),
  );
  return { ...Object.fromEntries(machine), HOME: home };
}

/**
 * The README's quick start, examples/quick-start.ts, as a user of runplan meets it: runplan packed
 * (`npm pack`, as `npm run tarballs` does) and installed into a project of its own with `npm i`, the
 * example type-checked there by tsc against the installed package's types (its `exports`), then run
 * with node on the Express fixture, as root and as an ordinary user, each with runplan's default cache.
 */
describe.runIf(asRoot)('the quick start (examples/quick-start.ts)', () => {
  let project: string;
  let user: TestUser;
  /** What tsc printed: nothing when the example type-checks. */
  let typeCheck: string;

  beforeAll(async () => {
    project = await tempDir('runplan-quick-start-');
    await chmod(project, 0o755);
    const { stdout } = await run('npm', ['pack', ROOT, '--pack-destination', project, '--json'], { cwd: project });
    const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
    await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: 'my-platform', private: true, type: 'module' })}\n`);
    // What a user runs: npm i <tarball>. Its dependencies come from npm's cache when the clone's npm ci put them there.
    await run('npm', ['i', '--no-audit', '--no-fund', '--prefer-offline', `./${filename}`], { cwd: project });
    await copyFile(join(ROOT, 'examples', 'quick-start.ts'), join(project, 'quick-start.ts'));
    await cp(join(ROOT, 'fixtures', 'node', 'express'), join(project, 'app'), { recursive: true });
    user = await makeTestUser('rpq');
    // tsc as a user's project runs it: its own tsconfig, runplan's types from the installed package's exports. It also writes quick-start.js.
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        outDir: '.',
        rootDir: '.',
      },
      files: ['quick-start.ts'],
    };
    await writeFile(join(project, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
    typeCheck = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project]).then(
      (r) => r.stdout,
      (e: { stdout: string }) => e.stdout,
    );
  });
  afterAll(async () => {
    await user?.remove();
  });

  it('is what the README shows: its lines from the import to the decisions, word for word', async () => {
    const example = await readFile(join(ROOT, 'examples', 'quick-start.ts'), 'utf8');
    const shown = example.slice(example.indexOf('import '), example.indexOf('\n', example.indexOf('for (const d of plan.decisions)')));
    expect(await readFile(join(ROOT, 'README.md'), 'utf8')).toContain(`\`\`\`ts\n${shown}\n\`\`\``);
  });

  it('type-checks against the installed package, with no access to runplan’s sources', async () => {
    expect(typeCheck).toBe('');
    expect(await readdir(project)).toContain('quick-start.js');
  });

  it('plans, explains, builds, starts, checks and stops the Express fixture as root', async () => {
    const port = await freePort();
    // The run's shared cache (RUNPLAN_CACHE_DIR, read by runplan as by its CLI): Node.js is not downloaded again.
    const env = { ...userEnvironment('/root'), RUNPLAN_CACHE_DIR: inject('sharedCacheDir'), RUNPLAN_WORK_DIR: await tempDir('runplan-work-') };
    const { stdout } = await run(process.execPath, ['quick-start.js', 'app', String(port)], { cwd: project, env });
    // Each decision explained: what, the value, and why.
    expect(stdout).toMatch(/^Start command: npm start \(scripts\.start is defined/m);
    expect(stdout).toMatch(/^plan sha256:[0-9a-f]{64}$/m);
    expect(stdout).toContain('healthy: GET / 200');
    expect(stdout).toContain('GET / answered 200');
  });

  it('does the same as an ordinary user, with runplan’s default cache in its home (~/.cache/runplan)', async () => {
    const home = join(project, 'home');
    await mkdir(home);
    await chown(home, user.uid, user.gid);
    const port = await freePort();
    const { stdout } = await run(process.execPath, ['quick-start.js', 'app', String(port)], {
      cwd: project,
      uid: user.uid,
      gid: user.gid,
      env: userEnvironment(home),
    });
    expect(stdout).toContain('healthy: GET / 200');
    expect(stdout).toContain('GET / answered 200');
    expect(await readdir(join(home, '.cache', 'runplan'))).toContain('apps');
  });
});
