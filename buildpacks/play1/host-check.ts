import type { PlanWarning, RuntimeNeeds } from '../../src/kit/index.js';
import { Play1Errors } from './errors.js';
import { pythonMajor } from './host-programs.js';
import { PLAY1_SERIES, type Play1Series } from './versions.js';
import { Play1Warnings } from './warnings.js';

/** What the host has, as its programs answered when the inventory was gathered (never a hard-coded version). */
export interface HostPrograms {
  /** `python2 --version` / `python3 --version` answers, null when absent or not working. */
  readonly python: { readonly python2: string | null; readonly python3: string | null };
  /** The java on PATH, null when there is none. */
  readonly java: { readonly major: number | null; readonly banner: string } | null;
}

/** The Python a series' launcher needs, as plan data. */
export function pythonNeeds(series: Play1Series): RuntimeNeeds {
  return { command: series.pythonCommand, min: series.python, max: series.python, above: 'refused' };
}

/** The Java a series needs, as plan data; `command` is the java the launcher will run. */
export function javaNeeds(series: Play1Series, command: string): RuntimeNeeds {
  return { command, min: series.java.min, max: series.java.max, above: series.javaAbove };
}

const range = (needs: RuntimeNeeds) => (needs.min === needs.max ? String(needs.min) : `${needs.min}–${needs.max}`);

/** The series whose launcher and Java this host has, for the fix of a refusal. */
function seriesThisHostRuns(host: HostPrograms): Play1Series[] {
  return PLAY1_SERIES.filter((s) => pythonFound(s, host) !== null && host.java?.major != null && javaVerdict(s, host.java.major) !== 'refused');
}

function pythonFound(series: Play1Series, host: HostPrograms): string | null {
  const version = host.python[series.pythonCommand];
  return version !== null && pythonMajor(version) === series.python ? version : null;
}

function javaVerdict(series: Play1Series, major: number): 'ok' | 'refused' | 'untested' {
  if (major < series.java.min) return 'refused';
  if (major > series.java.max) return series.javaAbove;
  return 'ok';
}

function alternatives(host: HostPrograms, series: Play1Series): string {
  const others = seriesThisHostRuns(host).filter((s) => s.series !== series.series);
  return others.length === 0 ? '' : ` Series this host can run as it is: ${others.map((s) => s.series).join(', ')}.`;
}

/**
 * The launcher's Python must be on the host: the series' launcher is a script of
 * that Python, so without it nothing of the build or the run can start. The
 * error names the series, what it needs, what was found and the fix.
 */
export function checkPython(series: Play1Series, host: HostPrograms): string {
  const found = pythonFound(series, host);
  if (found !== null) return found;
  const command = series.pythonCommand;
  const other = series.python === 2 ? host.python.python3 : host.python.python2;
  const fix =
    series.python === 2
      ? `Choose Play 1.7 or newer (e.g. PLAY1_VERSION=1.11), whose launcher runs on Python 3, or install a Python 2 as python2 on the host's PATH (Debian 12 has no Python 2 package).${alternatives(host, series)}`
      : `Install Python 3 on the host (e.g. apt-get install python3).${alternatives(host, series)}`;
  throw Play1Errors.PLAY1_PYTHON_MISSING.create({
    message: `Play ${series.release} (series ${series.series}) needs Python ${series.python}: its play launcher is a Python ${series.python} script, and this host has no working ${command} on PATH${other ? ` (only ${other})` : ''}.`,
    fix,
    details: { series: series.series, needs: pythonNeeds(series), found: host.python[command] },
  });
}

/**
 * The java on PATH against the series' range: older than the range, or newer
 * when the series' launcher adds options newer JVMs refuse, is an error before
 * the build; newer when the series was only not tested with it is a warning.
 */
export function checkJava(series: Play1Series, java: { major: number | null; banner: string }, host: HostPrograms): PlanWarning[] {
  const needs = javaNeeds(series, 'java');
  if (java.major === null) return [];
  const verdict = javaVerdict(series, java.major);
  if (verdict === 'ok') return [];
  if (verdict === 'untested') {
    return [Play1Warnings.PLAY1_JAVA_UNTESTED.create({ message: `Play ${series.release} was made for Java ${range(needs)}; this host's java is ${java.major}.` })];
  }
  const why =
    java.major < series.java.min ? `it is older than ${series.java.min}, which the framework's classes need` : `the launcher of series ${series.series} adds JVM options that Java 9 and later refuse`;
  throw Play1Errors.PLAY1_JAVA_UNSUPPORTED.create({
    message: `Play ${series.release} (series ${series.series}) needs Java ${range(needs)}; the java on PATH is ${java.major} (${java.banner}), and ${why}.`,
    fix: `Install a JDK ${range(needs)} and point JAVA_HOME at it (a deployment variable), or choose a series made for Java ${java.major} (PLAY1_VERSION).${alternatives(host, series)}`,
    variable: 'JAVA_HOME',
    details: { series: series.series, needs, found: java.major },
  });
}
