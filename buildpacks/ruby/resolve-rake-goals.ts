import { decide, type Decision } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';

// A goal is one rake argument: a task name with namespaces and bracketed arguments,
// or NAME=value. Nothing that rake would read as an option (a leading "-", e.g.
// "-e" runs Ruby code) and no whitespace.
const GOAL = /^[A-Za-z0-9_][A-Za-z0-9_:.\-[\]=/]*$/;

export interface RakeGoals {
  readonly goals: readonly string[];
  readonly decision: Decision;
}

/**
 * CC_RAKEGOALS (specification, Ruby rule 3): a comma-separated list, each goal
 * trimmed, run in order before the application starts; none by default. Empty
 * items (a trailing comma) are dropped.
 */
export function resolveRakeGoals(value: string | undefined): RakeGoals {
  const goals = (value ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  for (const goal of goals) {
    if (!GOAL.test(goal)) {
      throw RubyErrors.RUBY_RAKEGOALS_INVALID.create({
        message: `CC_RAKEGOALS item ${JSON.stringify(goal)} is not a rake task name${/^-/.test(goal) ? ' (a leading "-" would be read as a rake option)' : /\s/.test(goal) ? ' (it contains whitespace; separate goals with commas)' : ''}.`,
        variable: 'CC_RAKEGOALS',
      });
    }
  }
  return {
    goals,
    decision: decide({
      id: 'ruby.rake-goals',
      subject: 'Rake goals run before start',
      requests: [{ source: 'env CC_RAKEGOALS', value }],
      resolved: goals.length > 0 ? goals.join(', ') : '(none)',
      reason:
        goals.length > 0 ? 'each goal runs with `bundle exec rake <goal>`, in order, as a build step; a failing goal fails the deployment' : 'CC_RAKEGOALS is not set: no rake goal runs by default',
    }),
  };
}
