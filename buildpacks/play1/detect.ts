import type { Detector, FileSource } from '../../src/kit/index.js';
import { APPLICATION_CONF } from './application-conf.js';
import { Play1Errors } from './errors.js';

const ROUTES = 'conf/routes';

/**
 * A Play 1.x application has conf/application.conf and conf/routes (specification,
 * "Play 1.x files"; Play's launcher refuses an application without conf/routes).
 * Play 2 and later share that layout but are sbt projects, so any sign of sbt
 * means "not Play 1.x". Application.conf without routes is a broken Play 1.x
 * application: the error says what is missing rather than "no buildpack".
 */
export const play1Detector: Detector = {
  async detect(files) {
    if (!(await files.exists(APPLICATION_CONF))) return { status: 'skip', evidence: [`no ${APPLICATION_CONF}`] };
    const sbt = await sbtMarker(files);
    if (sbt) return { status: 'skip', evidence: [`${APPLICATION_CONF} found`, `${sbt} found: an sbt project (Play 2 or later), not Play 1.x`] };
    if (!(await files.exists(ROUTES))) {
      return {
        status: 'error',
        evidence: [`${APPLICATION_CONF} found`, `no ${ROUTES}`],
        error: Play1Errors.PLAY1_ROUTES_MISSING.create({
          message: `${APPLICATION_CONF} is present but ${ROUTES} is not; Play 1.x's launcher stops with "does not seem to host a valid application".`,
          file: ROUTES,
        }),
      };
    }
    return { status: 'pass', evidence: [`${APPLICATION_CONF} found`, `${ROUTES} found`] };
  },
};

/** The first file that shows an sbt build, if any. */
async function sbtMarker(files: FileSource): Promise<string | undefined> {
  if (await files.exists('build.sbt')) return 'build.sbt';
  for (const name of await files.list('project')) {
    if (name.endsWith('.scala') || name.endsWith('.sbt') || name === 'build.properties') return `project/${name}`;
  }
  return undefined;
}
