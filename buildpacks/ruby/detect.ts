import type { Detector } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';
import { CONFIG_RU, GEMFILES } from './project.js';

/**
 * A Ruby application has a Gemfile (or gems.rb) and config.ru. A Gemfile without
 * config.ru is a Ruby application missing its Rack file — unless a package.json
 * says it is a Node.js application that uses a few gems for tooling, which is
 * then left to the Node.js buildpack.
 */
export const rubyDetector: Detector = {
  async detect(files) {
    const gemfiles: string[] = [];
    for (const { gemfile } of GEMFILES) if (await files.exists(gemfile)) gemfiles.push(gemfile);
    if (gemfiles.length === 0) return { status: 'skip', evidence: ['no Gemfile or gems.rb'] };
    const found = `${gemfiles[0]} found`;
    if (await files.exists(CONFIG_RU)) return { status: 'pass', evidence: [found, 'config.ru found'] };
    if (await files.exists('package.json')) return { status: 'skip', evidence: [found, 'no config.ru (package.json found: not a Rack application)'] };
    return {
      status: 'error',
      evidence: [found, 'no config.ru'],
      error: RubyErrors.RUBY_CONFIG_RU_MISSING.create({
        message: `${gemfiles[0]} found but no config.ru in ${files.label}: the Rack configuration file is required to start the application.`,
        file: CONFIG_RU,
      }),
    };
  },
};
