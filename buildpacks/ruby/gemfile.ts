/**
 * What the buildpack reads from a Gemfile / gems.rb and its lock file. A Gemfile
 * is Ruby code: only the literal forms the specification names are read (the
 * `ruby` directive, `gem "name"` lines); anything dynamic is reported as such.
 */

export type RubyDirective =
  | { readonly kind: 'requirements'; readonly requirements: readonly string[]; readonly text: string }
  | { readonly kind: 'file'; readonly path: string; readonly text: string }
  | { readonly kind: 'unreadable'; readonly text: string };

const COMMENT = /(^|\s)#.*$/;

function codeLines(gemfile: string): string[] {
  return gemfile
    .split(/\r?\n/)
    .map((l) => l.replace(COMMENT, '$1').trim())
    .filter((l) => l !== '');
}

function stringLiterals(text: string): string[] {
  return [...text.matchAll(/(['"])(.*?)\1/g)].map((m) => m[2] as string);
}

/** The `ruby` directive of a Gemfile, if there is one. */
export function parseRubyDirective(gemfile: string): RubyDirective | undefined {
  for (const line of codeLines(gemfile)) {
    const m = /^ruby(?:\s+|\s*\()(.*?)\)?$/.exec(line);
    if (!m) continue;
    const args = (m[1] as string).trim();
    const file = /(?:^|,)\s*(?:file:|:file\s*=>)\s*(['"])(.+?)\1/.exec(args);
    if (file) return { kind: 'file', path: file[2] as string, text: line };
    // The idiom that predates `file:` (bundler < 2.4.20): ruby File.read(".ruby-version").strip
    const read = /^(?:File|IO)\.read\(\s*(?:File\.(?:join|expand_path)\(\s*(?:__dir__|File\.dirname\(__FILE__\))\s*,\s*)?(['"])([^'"]+)\1\s*\)?\s*\)(?:\.(?:strip|chomp|chomp\(\)|strip\(\)))*$/.exec(
      args,
    );
    if (read) return { kind: 'file', path: read[2] as string, text: line };
    // engine:, engine_version:, patchlevel: qualify the interpreter; the requirements come first.
    const positional = args.split(/,\s*(?=[a-z_]+:|:[a-z_]+\s*=>)/)[0] as string;
    if (!/^\s*(['"])[^'"]*\1(\s*,\s*(['"])[^'"]*\3)*\s*$/.test(positional)) return { kind: 'unreadable', text: line };
    return { kind: 'requirements', requirements: stringLiterals(positional), text: line };
  }
  return undefined;
}

/** The version held by a .ruby-version (`3.1.2`, `ruby-3.1.2`) or .tool-versions (`ruby 3.1.2`) file. */
export function parseVersionFile(content: string): string | undefined {
  for (const raw of content.split(/\r?\n/)) {
    const line = raw.replace(COMMENT, '$1').trim();
    if (line === '') continue;
    const tool = /^ruby\s+(\S+)/.exec(line);
    const value = tool ? (tool[1] as string) : line;
    return value.replace(/^ruby-/, '');
  }
  return undefined;
}

/** Names of the gems the Gemfile declares with a literal `gem "name"`. */
export function declaredGems(gemfile: string): Set<string> {
  const names = new Set<string>();
  for (const line of codeLines(gemfile)) {
    const m = /^gem[\s(]+(['"])([^'"]+)\1/.exec(line);
    if (m) names.add(m[2] as string);
  }
  return names;
}

export interface LockFile {
  /** Every gem of the bundle (GEM, PATH and GIT specs). */
  readonly specs: ReadonlyMap<string, string>;
  /** Top-level dependencies (DEPENDENCIES). */
  readonly dependencies: ReadonlySet<string>;
  /** "3.1.2" from "ruby 3.1.2p20", when the lock file records it. */
  readonly rubyVersion: string | undefined;
  /** Each GIT section: its remote and the gems it provides. */
  readonly gitSources: readonly { readonly remote: string; readonly gems: readonly string[] }[];
}

/** Reads the sections of a Gemfile.lock / gems.locked the buildpack uses. */
export function parseLockFile(text: string): LockFile {
  const specs = new Map<string, string>();
  const dependencies = new Set<string>();
  let rubyVersion: string | undefined;
  const gitSources: { remote: string; gems: string[] }[] = [];
  let git: { remote: string; gems: string[] } | undefined;
  let section = '';
  for (const line of text.split(/\r?\n/)) {
    if (/^[A-Z]/.test(line)) {
      section = line.trim();
      git = section === 'GIT' ? { remote: '', gems: [] } : undefined;
      if (git) gitSources.push(git);
      continue;
    }
    if (git) {
      const remote = /^ {2}remote: (\S+)\s*$/.exec(line);
      if (remote) git.remote = remote[1] as string;
    }
    if (['GEM', 'PATH', 'GIT'].includes(section)) {
      const m = /^ {4}([^\s(]+) \(([^)]+)\)$/.exec(line);
      if (m) specs.set(m[1] as string, m[2] as string);
      if (m && git) git.gems.push(m[1] as string);
    } else if (section === 'DEPENDENCIES') {
      const m = /^ {2}([^\s(!]+)/.exec(line);
      if (m) dependencies.add(m[1] as string);
    } else if (section === 'RUBY VERSION') {
      const m = /^\s+ruby (\d+(?:\.\d+)*)/.exec(line);
      if (m) rubyVersion = m[1];
    }
  }
  return { specs, dependencies, rubyVersion, gitSources: gitSources.filter((g) => g.remote !== '') };
}
