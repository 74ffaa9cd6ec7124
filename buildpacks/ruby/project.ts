import { type FileSource, MAX_LOCKFILE_BYTES } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';

export interface RubyProject {
  /** "gems.rb" or "Gemfile". */
  readonly gemfileName: string;
  readonly gemfile: string;
  /** "gems.locked" or "Gemfile.lock". */
  readonly lockFileName: string;
  readonly lockFile: string;
}

/** Bundler's pairs: gems.rb is read before Gemfile, each with its own lock file. */
export const GEMFILES = [
  { gemfile: 'gems.rb', lock: 'gems.locked' },
  { gemfile: 'Gemfile', lock: 'Gemfile.lock' },
] as const;

export const CONFIG_RU = 'config.ru';

/**
 * The checks of Ruby rule 1 that concern files: a Gemfile (or gems.rb) with its
 * committed lock file, and config.ru. ("Push to master" has no meaning for a
 * local build.)
 */
export async function readProject(files: FileSource): Promise<RubyProject> {
  let pair: (typeof GEMFILES)[number] | undefined;
  let gemfile: string | undefined;
  for (const candidate of GEMFILES) {
    gemfile = await files.readText(candidate.gemfile);
    if (gemfile !== undefined) {
      pair = candidate;
      break;
    }
  }
  if (!pair || gemfile === undefined) {
    throw RubyErrors.RUBY_GEMFILE_MISSING.create({ message: `no Gemfile or gems.rb in ${files.label}.`, file: 'Gemfile' });
  }
  const lockFile = await files.readText(pair.lock, { maxBytes: MAX_LOCKFILE_BYTES });
  if (lockFile === undefined) {
    const other = pair.gemfile === 'Gemfile' ? 'gems.locked' : 'Gemfile.lock';
    const hint = (await files.exists(other)) ? ` (${other} is present, but bundler pairs ${pair.gemfile} with ${pair.lock})` : '';
    throw RubyErrors.RUBY_LOCKFILE_MISSING.create({
      message: `${pair.gemfile} has no committed lock file ${pair.lock}${hint}; the bundle is installed from the lock file.`,
      file: pair.lock,
    });
  }
  if (!(await files.exists(CONFIG_RU))) {
    throw RubyErrors.RUBY_CONFIG_RU_MISSING.create({ message: `no config.ru in ${files.label}: the Rack configuration file is required to start the application.`, file: CONFIG_RU });
  }
  return { gemfileName: pair.gemfile, gemfile, lockFileName: pair.lock, lockFile };
}
