import { assignmentExcerpt, type Environment, type ProcfileEntry, type ProcfileReader } from '../../src/kit/index.js';

/** Rails' server is Puma by default: a web line running either means what this buildpack already runs. */
const PUMA_LINE = /\b(puma|rails\s+s(erver)?)\b/;
const SIDEKIQ_LINE = /\bsidekiq\b/;
/** `[bundle exec] rake|rails goal goal…`, as a release line migrates a database. */
const GOALS_LINE = /^(?:bundle\s+exec\s+|bin\/)?(?:rake|rails)\s+((?:[\w:.-]+\s*)+)$/;

export interface RubyProcfileContext {
  readonly env: Environment;
  /** Whether CC_ENABLE_SIDEKIQ or CC_SIDEKIQ_FILES already start Sidekiq. */
  readonly sidekiqRuns: boolean;
  /** CC_RAKEGOALS's goals. */
  readonly rakeGoals: readonly string[];
}

/**
 * The Procfile as the Ruby buildpack would have to read it: web is Puma behind
 * nginx (no variable replaces it), a Sidekiq line is CC_ENABLE_SIDEKIQ (or
 * CC_SIDEKIQ_FILES with its -C file), a release line of rake goals CC_RAKEGOALS.
 */
export function rubyProcfileReader(context: RubyProcfileContext): ProcfileReader {
  const advise = (entry: ProcfileEntry): string | null | undefined => {
    if (SIDEKIQ_LINE.test(entry.command)) {
      if (context.sidekiqRuns) return null;
      const file = /(?:^|\s)(?:-C|--config)\s+(\S+)/.exec(entry.command)?.[1];
      return file === undefined ? 'CC_ENABLE_SIDEKIQ=true' : assignmentExcerpt('CC_SIDEKIQ_FILES', file);
    }
    const goals = entry.type === 'release' ? GOALS_LINE.exec(entry.command.trim())?.[1]?.trim().split(/\s+/) : undefined;
    if (goals === undefined) return undefined;
    return goals.every((g) => context.rakeGoals.includes(g)) ? null : assignmentExcerpt('CC_RAKEGOALS', [...context.rakeGoals, ...goals.filter((g) => !context.rakeGoals.includes(g))].join(','));
  };
  return {
    buildpack: 'ruby',
    webCommand: 'Puma (bundle exec puma) behind nginx',
    webMatches: (command) => PUMA_LINE.test(command),
    variable: (name) => context.env.get(name),
    variableNames: context.env.list().map((e) => e.name),
    advise,
  };
}
