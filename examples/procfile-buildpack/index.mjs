// A buildpack for applications that say how they run in a Procfile (as Heroku's do):
// `web: <command>` serves HTTP on $PORT, every other line is a worker. It installs no
// runtime: the commands run with the host's programs. It imports nothing but
// runplan's buildpack kit, as a host's own buildpack would.
import { DEFAULT_RESTART, DEFAULT_STOP_GRACE_MS, decide, defineErrors } from 'runplan/buildpack';

const PROCFILE = 'Procfile';
// Heroku's process types: letters, digits, "_" and "-".
const LINE = /^([A-Za-z0-9_-]+):\s*(.*)$/;

// Codes of this buildpack's own: PROCFILE_E_<AREA>_<WHAT>, apart from runplan's RUNPLAN_E_….
export const ProcfileErrors = defineErrors(
  {
    FILE_INVALID: {
      title: 'The Procfile cannot be read as process types',
      kind: 'input',
      fix: 'Write one process per line as "<type>: <command>" (type: letters, digits, "_" or "-"), with a web process that listens on $PORT.',
    },
  },
  { prefix: 'PROCFILE' },
);

/**
 * The processes of a Procfile, in order: pure, so that it is tested without files.
 * Blank lines and "#" comments are skipped; anything else must be "<type>: <command>".
 */
export function parseProcfile(text) {
  const processes = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    const where = `line ${index + 1}`;
    if (!match) throw invalid(`${where} is not "<type>: <command>"`);
    const [, name, command] = match;
    if (command.trim() === '') throw invalid(`${where} gives ${name} no command`);
    if (processes.some((p) => p.name === name)) throw invalid(`${where} declares ${name} a second time`);
    processes.push({ name, command: command.trim() });
  }
  if (!processes.some((p) => p.name === 'web')) throw invalid('declares no web process, which the health check needs');
  return processes;
}

function invalid(why) {
  return ProcfileErrors.FILE_INVALID.create({ message: `the Procfile ${why}.`, file: PROCFILE });
}

const procfileBuildpack = {
  id: 'procfile',
  name: 'Procfile',
  // Below the built-in buildpacks: an application they recognise keeps its own runtime.
  priority: -10,
  defaultHealthCheck: { kind: 'port', reason: 'a Procfile says nothing of health: the web port must accept connections' },
  errors: ProcfileErrors,
  detector: {
    async detect(files) {
      return (await files.exists(PROCFILE)) ? { status: 'pass', evidence: ['Procfile found'] } : { status: 'skip', evidence: ['no Procfile'] };
    },
  },
  planner: {
    async plan({ files, host }) {
      const processes = parseProcfile((await files.readText(PROCFILE)) ?? '');
      return {
        runtimes: [],
        decisions: [
          decide({
            id: 'procfile.processes',
            subject: 'Processes',
            requests: [{ source: PROCFILE, value: processes.map((p) => p.name).join(', ') }],
            resolved: processes.map((p) => `${p.name}: ${p.command}`).join('; '),
            reason: 'each line of the Procfile is a process: web serves HTTP on $PORT, the others are workers',
          }),
        ],
        steps: [],
        layers: [],
        processes: processes.map((p) => ({
          name: p.name,
          role: p.name === 'web' ? 'web' : 'worker',
          command: { kind: 'shell', script: p.command },
          cwd: '.',
          env: {},
          pathPrepend: [],
          port: p.name === 'web' ? host.port : null,
          restart: DEFAULT_RESTART,
          stopGraceMs: DEFAULT_STOP_GRACE_MS,
        })),
        files: [],
        warnings: [],
      };
    },
  },
};

export default procfileBuildpack;
