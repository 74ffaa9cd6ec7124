import { decide, type Decision, lineExcerpt, type OverriddenSource, type PlanWarning, quoteExcerpt } from '../../src/kit/index.js';
import { RubyErrors, RubyWarnings } from './errors.js';

export interface SidekiqFile {
  readonly path: string;
  /** undefined when the file does not exist. */
  readonly text: string | undefined;
}

interface SidekiqProcessPlan {
  readonly name: string;
  /** Options given to `sidekiq` after `-e <env>`. */
  readonly args: readonly string[];
  readonly configFile: string | undefined;
}

export interface SidekiqResolution {
  readonly processes: readonly SidekiqProcessPlan[];
  readonly decision: Decision;
  readonly warnings: readonly PlanWarning[];
}

function isTrue(value: string | undefined): boolean {
  return value !== undefined && /^(true|1|yes|on)$/i.test(value.trim());
}

/** Splits CC_SIDEKIQ_FILES: comma-separated, trimmed, paths from the repository root ("./" and "/" prefixes allowed). */
export function sidekiqFileList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((p) => p.trim().replace(/^\.?\/+/, ''))
    .filter((p) => p !== '');
}

/**
 * Sidekiq processes (specification, Ruby rule 4): CC_SIDEKIQ_FILES lists
 * configuration files, one process per file, and takes precedence over
 * CC_ENABLE_SIDEKIQ (enabled even when it is false); otherwise
 * CC_ENABLE_SIDEKIQ=true gives one process with Sidekiq's own defaults (it reads
 * config/sidekiq.yml when present). Each file must exist and be YAML; Sidekiq 6
 * ignores :logfile: and :pidfile:, which is warned about (its output is captured).
 */
export async function resolveSidekiq(enable: string | undefined, filesValue: string | undefined, files: readonly SidekiqFile[], rubyEnv: string): Promise<SidekiqResolution> {
  const listed = sidekiqFileList(filesValue);
  const overridden: OverriddenSource[] = [];
  const warnings: PlanWarning[] = [];
  if (listed.length > 0) {
    const processes: SidekiqProcessPlan[] = [];
    for (const [i, path] of listed.entries()) {
      const file = files.find((f) => f.path === path);
      if (path.split('/').includes('..')) {
        throw RubyErrors.RUBY_SIDEKIQ_FILE_MISSING.create({ message: `CC_SIDEKIQ_FILES names ${quoteExcerpt(path)}, which leaves the repository.`, variable: 'CC_SIDEKIQ_FILES', file: path });
      }
      if (file?.text === undefined) {
        throw RubyErrors.RUBY_SIDEKIQ_FILE_MISSING.create({ message: `CC_SIDEKIQ_FILES names ${path}, which does not exist in the application.`, variable: 'CC_SIDEKIQ_FILES', file: path });
      }
      warnings.push(...(await checkSidekiqYaml(path, file.text, rubyEnv)));
      processes.push({ name: listed.length === 1 ? 'sidekiq' : `sidekiq-${i + 1}`, args: ['-C', path], configFile: path });
    }
    if (enable !== undefined) overridden.push({ source: 'env CC_ENABLE_SIDEKIQ', value: enable, reason: 'CC_SIDEKIQ_FILES takes precedence: one process per listed file' });
    return {
      processes,
      warnings,
      decision: decide({
        id: 'ruby.sidekiq',
        subject: 'Sidekiq processes',
        requests: [{ source: 'env CC_SIDEKIQ_FILES', value: filesValue as string }],
        resolved: processes.map((p) => `${p.name} (${p.configFile})`).join(', '),
        reason: 'one Sidekiq process per file listed in CC_SIDEKIQ_FILES (Ruby rule 4), enabled whatever CC_ENABLE_SIDEKIQ says; supervised like the web process',
        lost: overridden,
      }),
    };
  }
  // Set, but only commas and spaces: not the same as unset, and most likely a mistake worth saying.
  const setButEmpty = filesValue !== undefined && filesValue.trim() !== '';
  if (setButEmpty) {
    warnings.push(
      RubyWarnings.RUBY_SIDEKIQ_FILES_EMPTY.create({
        message: `CC_SIDEKIQ_FILES is set to ${JSON.stringify(filesValue.slice(0, 40))}${filesValue.length > 40 ? '…' : ''}, which lists no file (only commas and spaces), so it starts no Sidekiq process.`,
        variable: 'CC_SIDEKIQ_FILES',
      }),
    );
  }
  const filesNote = setButEmpty ? 'CC_SIDEKIQ_FILES is set but lists no file' : 'CC_SIDEKIQ_FILES is not set';
  if (isTrue(enable)) {
    const defaultFile = files.find((f) => f.path === 'config/sidekiq.yml');
    if (defaultFile?.text !== undefined) warnings.push(...(await checkSidekiqYaml(defaultFile.path, defaultFile.text, rubyEnv)));
    return {
      processes: [{ name: 'sidekiq', args: [], configFile: defaultFile?.text === undefined ? undefined : defaultFile.path }],
      warnings,
      decision: decide({
        id: 'ruby.sidekiq',
        subject: 'Sidekiq processes',
        requests: [{ source: 'env CC_ENABLE_SIDEKIQ', value: enable as string }],
        resolved: 'sidekiq',
        reason: `CC_ENABLE_SIDEKIQ=${enable} enables one Sidekiq process${defaultFile?.text === undefined ? '' : ' (Sidekiq reads config/sidekiq.yml itself)'}; supervised like the web process`,
        lost: overridden,
      }),
    };
  }
  return {
    processes: [],
    warnings,
    decision: decide({
      id: 'ruby.sidekiq',
      subject: 'Sidekiq processes',
      requests: [{ source: 'env CC_ENABLE_SIDEKIQ', value: enable }],
      resolved: '(none)',
      reason:
        enable === undefined
          ? setButEmpty
            ? 'CC_ENABLE_SIDEKIQ is not set and CC_SIDEKIQ_FILES is set but lists no file'
            : 'neither CC_ENABLE_SIDEKIQ nor CC_SIDEKIQ_FILES is set'
          : `CC_ENABLE_SIDEKIQ=${enable} does not enable Sidekiq and ${filesNote}`,
      lost: overridden,
    }),
  };
}

/** Aliases a Sidekiq file may expand: real ones use a handful (shared defaults per environment). */
const SIDEKIQ_MAX_ALIAS_COUNT = 100;

/** Parses a Sidekiq file (syntax errors are coded errors) and warns about keys Sidekiq 6 ignores. */
export async function checkSidekiqYaml(path: string, text: string, rubyEnv: string): Promise<PlanWarning[]> {
  // Loaded only when there is a Sidekiq file to read: it is a good part of the CLI's start-up otherwise.
  const { parseDocument } = await import('yaml');
  const doc = parseDocument(text, { uniqueKeys: false });
  const error = doc.errors[0];
  if (error) {
    const [line, column] = error.linePos?.[0] ? [error.linePos[0].line, error.linePos[0].col] : [0, 0];
    throw RubyErrors.RUBY_SIDEKIQ_FILE_INVALID.create({
      message: `${path} is not valid YAML at line ${line}, column ${column}: ${lineExcerpt(error.message.split('\n')[0] ?? '', 200)}`,
      file: path,
      details: { line, column },
    });
  }
  let value: unknown;
  try {
    // yaml refuses a document whose aliases expand beyond this (a "billion laughs" file would fill memory).
    value = doc.toJS({ maxAliasCount: SIDEKIQ_MAX_ALIAS_COUNT });
  } catch (cause) {
    throw RubyErrors.RUBY_SIDEKIQ_FILE_INVALID.create({
      message: `${path} cannot be read as data: ${lineExcerpt((cause as Error).message, 200)}.`,
      file: path,
      cause,
    });
  }
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    throw RubyErrors.RUBY_SIDEKIQ_FILE_INVALID.create({
      message: `${path} must hold a mapping of options (such as ":concurrency: 5"), not ${Array.isArray(value) ? 'a list' : typeof value}.`,
      file: path,
    });
  }
  const ignored = new Set<string>();
  const scan = (map: Record<string, unknown>) => {
    for (const key of Object.keys(map)) if ([':logfile', ':pidfile', 'logfile', 'pidfile'].includes(key)) ignored.add(key.replace(/^:/, ''));
  };
  const root = (value ?? {}) as Record<string, unknown>;
  scan(root);
  const perEnv = root[rubyEnv] ?? root[`:${rubyEnv}`];
  if (perEnv && typeof perEnv === 'object' && !Array.isArray(perEnv)) scan(perEnv as Record<string, unknown>);
  if (ignored.size === 0) return [];
  return [
    RubyWarnings.RUBY_SIDEKIQ_LOGFILE_IGNORED.create({
      message: `${path} sets ${[...ignored].map((k) => `:${k}:`).join(' and ')}, which Sidekiq 6 ignores; its output goes to the deployment log instead.`,
      file: path,
    }),
  ];
}
