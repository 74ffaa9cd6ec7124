import { createHash } from 'node:crypto';
import { readdir, realpath } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { runProgram } from '../../src/kit/index.js';

/** One Ruby interpreter installed on the host. */
export interface InstalledRuby {
  /** e.g. "3.1.2" */
  readonly version: string;
  /** Directory holding `ruby`, `bundle`, `rake` for this interpreter; put first on PATH. */
  readonly bindir: string;
  /** Where it comes from, for the plan, e.g. "host /usr/bin/ruby3.1". */
  readonly origin: string;
  /**
   * A digest of the gems installed for this interpreter. With gems coming from
   * the system, the cached bundle is only valid while they stay the same.
   */
  readonly gemsFingerprint?: string;
}

/** The rubies a buildpack may choose from: a list, or a function the host provides. */
export type RubyInventory = readonly InstalledRuby[] | (() => Promise<readonly InstalledRuby[]>);

export async function listRubies(inventory: RubyInventory): Promise<readonly InstalledRuby[]> {
  return typeof inventory === 'function' ? inventory() : inventory;
}

const PROBE = 'print RUBY_VERSION, "\\n", RbConfig::CONFIG["bindir"], "\\n", Gem.path.join(File::PATH_SEPARATOR)';

/** Where interpreters are looked for besides PATH: the usual places of ruby-install and Debian. */
const EXTRA_ROOTS = ['/opt/rubies', join(process.env.HOME ?? '/root', '.rubies')];

async function candidates(pathVariable: string): Promise<string[]> {
  const found: string[] = [];
  for (const dir of pathVariable.split(delimiter).filter(Boolean)) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (/^ruby(\d+(\.\d+)*)?$/.test(name)) found.push(join(dir, name));
    }
  }
  for (const root of EXTRA_ROOTS) {
    for (const name of await readdir(root).catch(() => [] as string[])) found.push(join(root, name, 'bin', 'ruby'));
  }
  return found;
}

/** Names of the installed gem specifications, hashed: they change when a gem is added, removed or upgraded. */
async function gemsFingerprint(gemPath: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const dir of gemPath) {
    const names = await readdir(join(dir, 'specifications')).catch(() => [] as string[]);
    hash.update(`${dir}\n${names.sort().join('\n')}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

let probed: Promise<Array<Omit<InstalledRuby, 'gemsFingerprint'> & { gemPath: string[] }>> | undefined;

/**
 * The rubies installed on this machine: every `ruby`/`rubyX.Y` on PATH and under
 * /opt/rubies and ~/.rubies, asked for its version once per process. The gem
 * fingerprint is read again on every call (a directory listing), so a gem
 * installed meanwhile invalidates cached bundles.
 */
export async function systemRubies(): Promise<readonly InstalledRuby[]> {
  probed ??= (async () => {
    const seen = new Set<string>();
    const out: Array<Omit<InstalledRuby, 'gemsFingerprint'> & { gemPath: string[] }> = [];
    for (const candidate of await candidates(process.env.PATH ?? '/usr/bin')) {
      const real = await realpath(candidate).catch(() => undefined);
      if (!real || seen.has(real)) continue;
      seen.add(real);
      // GEM_HOME and GEM_PATH of the host decide where its gems are: the whole environment of runplan's process.
      const ran = await runProgram(real, ['-e', PROBE], { timeoutMs: 10_000, env: process.env });
      // Not a working interpreter (or not Ruby at all): not available.
      if (!ran?.ok) continue;
      const [version, bindir, gemPath] = ran.stdout.split('\n');
      if (!version || seen.has(`v${version}`)) continue;
      seen.add(`v${version}`);
      out.push({ version, bindir: bindir || dirname(real), origin: `host ${real}`, gemPath: (gemPath ?? '').split(delimiter).filter(Boolean) });
    }
    return out;
  })();
  return Promise.all((await probed).map(async ({ gemPath, ...ruby }) => ({ ...ruby, gemsFingerprint: await gemsFingerprint(gemPath) })));
}
