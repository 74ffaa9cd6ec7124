import { assignmentExcerpt } from '../../src/kit/index.js';
import { FRAMEWORKS, STATIC_SERVER, type FrameworkSignature } from './framework-signatures.js';
import type { PackageJson } from './package-json.js';

/** A framework recognised in package.json (framework-signatures.ts). */
export interface DetectedFramework {
  readonly signature: FrameworkSignature;
  /** The dependency that revealed it. */
  readonly dependency: string;
  /** Whether that dependency is a devDependency (left out of a production install). */
  readonly dev: boolean;
}

/** How the framework's production server starts, and what the application must add first. */
export interface ProductionServer {
  /** The command, as a package.json script writes it. */
  readonly start: string;
  /** What to add before it works (an adapter, the static file server); empty when nothing. */
  readonly needs: readonly string[];
  /** What the command is, for a message. */
  readonly what: string;
}

function dependencyKind(pkg: PackageJson, name: string): 'prod' | 'dev' | undefined {
  if (Object.hasOwn(pkg.dependencies ?? {}, name)) return 'prod';
  if (Object.hasOwn(pkg.devDependencies ?? {}, name)) return 'dev';
  return undefined;
}

/** The files the signatures of the frameworks package.json lists look for: planning checks which exist (only those: a file is looked at only when it matters). */
export function signatureFiles(pkg: PackageJson, table: readonly FrameworkSignature[] = FRAMEWORKS): string[] {
  const listed = table.filter((s) => s.dependencies.some((d) => dependencyKind(pkg, d) !== undefined));
  return [...new Set(listed.flatMap((s) => s.files ?? []))];
}

/**
 * The first framework of the table whose dependency package.json lists (in
 * dependencies or devDependencies) and whose other conditions hold (a file that
 * exists, another dependency). Pure: package.json and the files found in.
 */
export function detectFramework(pkg: PackageJson, presentFiles: ReadonlySet<string>, table: readonly FrameworkSignature[] = FRAMEWORKS): DetectedFramework | undefined {
  for (const signature of table) {
    const dependency = signature.dependencies.find((d) => dependencyKind(pkg, d) !== undefined);
    if (dependency === undefined) continue;
    if (signature.files && !signature.files.some((f) => presentFiles.has(f))) continue;
    if (signature.with && !signature.with.some((d) => dependencyKind(pkg, d) !== undefined)) continue;
    return { signature, dependency, dev: dependencyKind(pkg, dependency) === 'dev' };
  }
  return undefined;
}

/**
 * The command that serves the framework's build in production: its own server
 * when it writes one (with its adapter, when it needs one), else a static file
 * server over its output folder.
 */
export function productionServer(detected: DetectedFramework, pkg: PackageJson): ProductionServer {
  const { name, output, server, static: staticOutput } = detected.signature;
  const adapters = server?.adapters ?? [];
  const hasAdapter = adapters.length === 0 || adapters.some((a) => dependencyKind(pkg, a) !== undefined);
  if (server && hasAdapter) return { start: server.start, needs: [], what: `${name}'s production server, which its build writes to ${output}` };
  if (staticOutput) {
    return {
      start: STATIC_SERVER.start(output, staticOutput.spa),
      needs: dependencyKind(pkg, STATIC_SERVER.package) === 'prod' ? [] : [`add ${STATIC_SERVER.package} to dependencies`],
      what: `a static file server over ${output}, where ${name}'s build writes the site${server ? ` (without ${adapters.join(' or ')}, ${name} writes no server)` : ''}`,
    };
  }
  const adapter = server?.adapterAdvice ?? `add ${adapters[0]} to dependencies`;
  return { start: server?.start ?? '', needs: [adapter], what: `${name}'s production server, which its build writes to ${output} once it has a Node.js adapter` };
}

/**
 * The command as CC_RUN_COMMAND would run it: processes have the runtime's
 * commands on PATH but not node_modules/.bin, which npm adds for scripts only,
 * so a dependency's command goes through npx (which runs the installed one).
 */
export function asRunCommand(start: string): string {
  const words = start.split(/\s+/);
  const at = words.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  if (at < 0 || words[at] === 'node') return start;
  return [...words.slice(0, at), 'npx', ...words.slice(at)].join(' ');
}

/** Writes a command into a JSON string, for a fix that shows a package.json line. */
const jsonText = (text: string) => JSON.stringify(text);

/**
 * NODE_NO_START_COMMAND for a framework the table knows: the message names the
 * framework, the fix the command its production server needs (as scripts.start
 * or CC_RUN_COMMAND), what to add first, and the build hook when nothing runs the
 * build. `buildFix` is that hook's fix, or undefined when the build already runs.
 */
export function missingStartAdvice(detected: DetectedFramework, pkg: PackageJson, buildFix: string | undefined): { message: string; fix: string } {
  const server = productionServer(detected, pkg);
  const { name } = detected.signature;
  const start = `add "start": ${jsonText(server.start)} to the scripts of package.json, or set ${assignmentExcerpt('CC_RUN_COMMAND', asRunCommand(server.start), 200)}`;
  const steps = [...server.needs, start].join(', then ');
  return {
    message: `package.json defines neither scripts.start nor main, so there is no way to start the application; it is a ${name} application (${detected.dependency} in ${
      detected.dev ? 'devDependencies' : 'dependencies'
    }), served in production by ${server.what}: ${server.start}.`,
    fix: `${steps.charAt(0).toUpperCase()}${steps.slice(1)}.${buildFix === undefined ? '' : ` And build it: ${buildFix.charAt(0).toLowerCase()}${buildFix.slice(1)}`}`,
  };
}
