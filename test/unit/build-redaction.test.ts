import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as kit from '../../src/kit/index.js';
import type { Buildpack, PlanContribution } from '../../src/kit/index.js';
import { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { buildImage } from '../../src/engines/image/build-image.js';
import type { DockerCli } from '../../src/engines/docker-cli.js';
import { STEP_MARKER } from '../../src/engines/image/dockerfile.js';
import { CoreErrors } from '../../src/errors/core-errors.js';
import { isRunplanError } from '../../src/errors/runplan-error.js';
import type { Executor } from '../../src/executor/contract.js';
import { deploy } from '../../src/executor/deploy-flow.js';
import type { LogLine } from '../../src/log/logger.js';
import { createPlan } from '../../src/planning/create-plan.js';
import { TEST_PLAN_INVENTORY } from '../helpers/inventory.js';
import { tempDir } from '../helpers/temp.js';
import { webOnlyContribution } from '../helpers/contribution.js';

const SECRET = 'pw-of-the-image-build-91c2';

/** A buildpack whose one build step, `migrate`, quotes what it printed in its error (as the built-in buildpacks' `{output}` rules do). */
function migratingBuildpack(onFailure: PlanContribution['steps'][number]['onFailure']): Buildpack {
  return {
    id: 'acme',
    name: 'Acme',
    priority: 0,
    defaultHealthCheck: { kind: 'port', reason: 'the port accepts connections' },
    detector: { detect: async (files) => ((await files.exists('app.acme')) ? { status: 'pass', evidence: ['app.acme found'] } : { status: 'skip', evidence: ['no app.acme'] }) },
    planner: {
      // The smallest web-only part, with the one step whose failure quotes its output.
      plan: async ({ host }) => ({
        ...webOnlyContribution(['acme-server'], host.port),
        steps: [
          {
            name: 'migrate',
            description: 'migrates the database',
            run: { kind: 'exec', argv: ['acme-migrate'] },
            cwd: '.',
            env: {},
            pathPrepend: [],
            layer: null,
            ...(onFailure ? { onFailure } : {}),
          },
        ],
      }),
    },
  };
}

/** `docker build` as a stand-in: prints BuildKit's plain progress of a failed `migrate` step (which printed the secret) and fails. */
function failingDocker(lines: readonly string[]): DockerCli {
  return {
    stream: async (_args: readonly string[], line: (text: string, stream: 'stdout' | 'stderr') => void) => {
      for (const l of lines) line(l, 'stdout');
      return 1;
    },
    ok: async () => '',
  } as unknown as DockerCli;
}

async function imageBuild(buildpack: Buildpack, dockerLines: readonly string[]) {
  const root = await tempDir();
  const appDir = join(root, 'app');
  await mkdir(appDir);
  await writeFile(join(appDir, 'app.acme'), '');
  const host = { workDir: join(root, 'work'), cacheDir: join(root, 'cache') };
  const registry = new BuildpackRegistry([buildpack]);
  const toCarryOut = await createPlan({ registry, appDir, inventory: TEST_PLAN_INVENTORY, host, env: { application: { DB_PASSWORD: SECRET } } });
  const lines: LogLine[] = [];
  const error = await buildImage({ registry, appDir, host, sink: (l) => lines.push(l), docker: failingDocker(dockerLines), base: 'debian:12-slim', tag: 'runplan/acme:test' }, toCarryOut).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, lines };
}

const printedSecret = (vertex: number) => [
  `#${vertex} [3/4] RUN --mount=type=secret,id=file-0 ["/bin/sh", "-c", "set -e; echo '${STEP_MARKER}migrate'; acme-migrate"]`,
  `#${vertex} 0.101 ${STEP_MARKER}migrate`,
  `#${vertex} 0.250 connecting to postgres://app:${SECRET}@db.internal/app`,
  `#${vertex} 0.300 FATAL: password authentication failed for password "${SECRET}"`,
  `#${vertex} ERROR: process "/bin/sh -c acme-migrate ${SECRET}" did not complete successfully: exit code: 3`,
  '------',
  ` > [3/4] RUN acme-migrate: ${SECRET}`,
  `ERROR: failed to solve: process "/bin/sh -c acme-migrate ${SECRET}" did not complete successfully: exit code: 3`,
];

describe('the image build redacts', () => {
  it("every line it shows, and a step's error that quotes what the step printed", async () => {
    const bp = migratingBuildpack([
      {
        when: { kind: 'output', pattern: 'FATAL: (.*)' },
        error: { code: 'RUNPLAN_E_BUILD_STEP_FAILED', kind: 'deployment', message: 'the migration failed: {output}', fix: 'Check the database settings.' },
      },
    ]);
    const { error, lines } = await imageBuild(bp, printedSecret(7));
    expect(isRunplanError(error)).toBe(true);
    const e = error as kit.RunplanError;
    // The rule matched and quoted the line: with the secret's place, not its value.
    expect(e.reason).toBe('the migration failed: password authentication failed for password "***"');
    expect(lines.some((l) => l.text.includes('password "***"'))).toBe(true);
    for (const text of [e.message, e.reason, e.fix, e.stack ?? '', JSON.stringify(e.details), ...lines.map((l) => l.text)]) expect(text).not.toContain(SECRET);
  });

  it('the error of a failed step no rule explains, and of a build that failed outside any step', async () => {
    const { error: stepError } = await imageBuild(migratingBuildpack(undefined), printedSecret(7));
    expect(stepError).toMatchObject({ code: 'RUNPLAN_E_IMAGE_BUILD_FAILED', details: { step: 'migrate', exitCode: 3 } });
    // No step marker: the failure is the build's, and its error quotes BuildKit's last ERROR line.
    const outside = printedSecret(9).filter((l) => !l.includes(STEP_MARKER));
    const { error, lines } = await imageBuild(migratingBuildpack(undefined), outside);
    expect(error).toMatchObject({ code: 'RUNPLAN_E_IMAGE_BUILD_FAILED' });
    const e = error as kit.RunplanError;
    expect(e.reason).toContain('ERROR: process "/bin/sh -c acme-migrate ***" did not complete successfully');
    for (const text of [e.message, e.stack ?? '', ...lines.map((l) => l.text)]) expect(text).not.toContain(SECRET);
  });
});

describe("the deploy flow redacts an engine's build error", () => {
  it('whatever the executor, before the deployment throws it', async () => {
    const bp = migratingBuildpack(undefined);
    const root = await tempDir();
    const registry = new BuildpackRegistry([bp]);
    const toCarryOut = await createPlan({
      registry,
      files: new kit.MemorySource({ 'app.acme': '' }),
      inventory: TEST_PLAN_INVENTORY,
      host: { workDir: root, cacheDir: root },
      env: { application: { DB_PASSWORD: SECRET } },
    });
    const thrown = [
      CoreErrors.IMAGE_BUILD_FAILED.create({ message: `the engine said: ${SECRET}`, fix: `retry without ${SECRET}`, details: { said: SECRET } }),
      new Error(`engine failed: ${SECRET}`, { cause: new Error(`because ${SECRET}`) }),
    ];
    for (const error of thrown) {
      const executor = {
        name: 'stand-in',
        build: async () => {
          throw error;
        },
      } as unknown as Executor;
      const e = (await deploy(toCarryOut, executor, { sink: () => {} }).catch((x: unknown) => x)) as Error;
      expect(e).not.toBe(error);
      expect(e.message).toContain('***');
      const texts = [e.message, e.stack ?? '', String((e.cause as Error | undefined)?.message), isRunplanError(e) ? `${e.fix} ${JSON.stringify(e.details)}` : ''];
      for (const text of texts) expect(text).not.toContain(SECRET);
    }
  });
});
