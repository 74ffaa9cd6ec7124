import { describe, expect, it } from 'vitest';
import { rubyProcfileReader } from '../../buildpacks/ruby/procfile-reader.js';
import { CoreWarnings } from '../../src/errors/core-warnings.js';
import { assignmentExcerpt } from '../../src/errors/excerpt.js';
import { Environment } from '../../src/env/assemble.js';
import { MemorySource } from '../../src/files/memory-source.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { procfileEntries, procfileIgnored, type ProcfileReader } from '../../src/planning/procfile-hint.js';
import { TEST_PLAN_INVENTORY, testRegistry } from '../helpers/inventory.js';

const variables = (values: Record<string, string> = {}): Pick<ProcfileReader, 'variable' | 'variableNames'> => ({ variable: (n) => values[n], variableNames: Object.keys(values) });
const node = (values: Record<string, string> = {}): ProcfileReader => ({
  buildpack: 'node',
  webCommand: 'npm start',
  webMatches: (c) => c === 'npm start',
  webVariable: 'CC_RUN_COMMAND',
  ...variables(values),
});
const environment = (values: Record<string, string>) => {
  const env = new Environment();
  for (const [name, value] of Object.entries(values)) env.put(name, value, 'application', 'test');
  return env;
};

describe('a Procfile the buildpack does not read', () => {
  it('reads its process lines leniently: comments, blank and malformed lines skipped, the first of a type kept', () => {
    expect(procfileEntries('# processes\n\nweb: node a.js\r\nnot a line\nworker:   node w.js  \nweb: node b.js\nempty:\n')).toEqual([
      { type: 'web', command: 'node a.js' },
      { type: 'worker', command: 'node w.js' },
    ]);
  });

  it('names the variable each line means: web the run command, release the pre-run hook, the others workers', () => {
    const warning = procfileIgnored('web: node server.js --port $PORT\nrelease: node migrate.js\nworker: node worker.js\nclock: node clock.js\n', node());
    expect(warning).toEqual({
      code: CoreWarnings.PROCFILE_IGNORED.code,
      message:
        'the node buildpack does not read the Procfile: it starts the web process with npm start, and these lines do not run: web (node server.js --port $PORT), release (node migrate.js), worker (node worker.js), clock (node clock.js).',
      file: 'Procfile',
      fix: "Set CC_RUN_COMMAND='node server.js --port $PORT' and CC_PRE_RUN_HOOK='node migrate.js' and CC_WORKER_COMMAND='node worker.js' and CC_WORKER_COMMAND_1='node clock.js'; or deploy it with the Procfile buildpack of runplan's kit instead (examples/procfile-buildpack: runplan run <app> --buildpack <its path>), which runs each line as it is.",
    });
  });

  it('says nothing of lines the application already runs, and numbers new workers after its own', () => {
    expect(procfileIgnored('web: npm start\n', node())).toBeUndefined();
    expect(procfileIgnored('web: node s.js\nworker: node w.js\n', node({ CC_RUN_COMMAND: 'node s.js', CC_WORKER_COMMAND_3: 'node w.js' }))).toBeUndefined();
    expect(procfileIgnored('worker: node w.js\n', node({ CC_WORKER_COMMAND: 'node other.js', CC_WORKER_COMMAND_2: 'x' }))?.fix).toMatch(/^Set CC_WORKER_COMMAND_3='node w.js';/);
    expect(procfileIgnored(undefined, node())).toBeUndefined();
    expect(procfileIgnored('', node())).toBeUndefined();
  });

  it('stays one short warning for a hostile Procfile, its commands quoted for a shell and cut', () => {
    const text = Array.from({ length: 5000 }, (_, i) => `w${i}: ${"node x.js 'it''s' \u001b[31m".repeat(40)}`).join('\n');
    const warning = procfileIgnored(text, node());
    expect(warning?.message).toContain('and 4990 more');
    expect(warning?.message).not.toContain('\u001b');
    expect((warning?.message.length ?? 0) + (warning?.fix?.length ?? 0)).toBeLessThan(5000);
    expect(assignmentExcerpt('CC_RUN_COMMAND', "it's $PORT")).toBe(`CC_RUN_COMMAND='it'\\''s $PORT'`);
    expect(assignmentExcerpt('CC_RUBY_VERSION', '3.1')).toBe('CC_RUBY_VERSION=3.1');
  });

  it('reads a Rails Procfile as the Ruby buildpack would: Puma is web, Sidekiq and rake goals have their own variables', () => {
    const reader = (values: Record<string, string> = {}, sidekiqRuns = false, rakeGoals: string[] = []) => rubyProcfileReader({ env: environment(values), sidekiqRuns, rakeGoals });
    const rails = 'web: bundle exec puma -C config/puma.rb\nworker: bundle exec sidekiq -C config/sidekiq.yml\nrelease: bundle exec rake db:migrate\n';
    expect(procfileIgnored(rails, reader())?.fix).toMatch(/^Set CC_SIDEKIQ_FILES=config\/sidekiq.yml and CC_RAKEGOALS=db:migrate; or deploy it with the Procfile buildpack/);
    expect(procfileIgnored(rails, reader({}, true, ['assets:precompile']))?.fix).toMatch(/^Set CC_RAKEGOALS=assets:precompile,db:migrate;/);
    expect(procfileIgnored(rails, reader({}, true, ['db:migrate']))).toBeUndefined();
    expect(procfileIgnored('web: bin/rails server -p $PORT\nworker: bundle exec sidekiq\n', reader())?.fix).toMatch(/^Set CC_ENABLE_SIDEKIQ=true;/);
    const unicorn = procfileIgnored('web: bundle exec unicorn -p $PORT\n', reader());
    expect(unicorn?.message).toContain('starts the web process with Puma (bundle exec puma) behind nginx, and these lines do not run: web (bundle exec unicorn -p $PORT)');
    expect(unicorn?.fix).toMatch(/^To run the Procfile's web line, deploy it with the Procfile buildpack/);
  });

  it('is planned for a Node.js application whose Procfile says something else than its start', async () => {
    const { plan } = await createPlan({
      registry: testRegistry(),
      inventory: TEST_PLAN_INVENTORY,
      files: new MemorySource({ 'package.json': '{"scripts":{"start":"node server.js"}}', '.gitignore': 'node_modules\n', Procfile: 'web: node server.js --cluster\n' }),
      appDir: '/srv/app',
    });
    expect(plan.warnings).toEqual([expect.objectContaining({ code: CoreWarnings.PROCFILE_IGNORED.code, fix: expect.stringMatching(/^Set CC_RUN_COMMAND='node server.js --cluster';/) })]);
  });
});
