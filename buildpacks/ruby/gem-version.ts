/**
 * RubyGems' version requirements, as the Gemfile's `ruby` directive uses them:
 * `=`, `!=`, `>`, `<`, `>=`, `<=` and the pessimistic `~>`. Versions compare by
 * numeric segments with trailing zeros ignored ("3.1" equals "3.1.0"), like
 * Gem::Version.
 */

const VERSION = /^\d+(?:\.\d+)*$/;
const REQUIREMENT = /^\s*(=|!=|>=|<=|>|<|~>)?\s*(\d+(?:\.\d+)*)\s*$/;

type Operator = '=' | '!=' | '>' | '<' | '>=' | '<=' | '~>';

export interface Requirement {
  readonly operator: Operator;
  readonly version: string;
}

export function isVersion(text: string): boolean {
  return VERSION.test(text);
}

function segments(version: string): number[] {
  const parts = version.split('.').map(Number);
  while (parts.length > 1 && parts[parts.length - 1] === 0) parts.pop();
  return parts;
}

export function compareVersions(a: string, b: string): number {
  const x = segments(a);
  const y = segments(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** Parses one requirement ("~> 3.1.0", ">= 3", "3.1.2"); undefined when it is not one. */
export function parseRequirement(text: string): Requirement | undefined {
  const m = REQUIREMENT.exec(text);
  if (!m) return undefined;
  return { operator: (m[1] ?? '=') as Operator, version: m[2] as string };
}

/** `~> 3.1.2` allows 3.1.x from 3.1.2; `~> 3.1` allows 3.x from 3.1; `~> 3` allows 3.x. */
function pessimisticUpperBound(version: string): string {
  const parts = version.split('.').map(Number);
  if (parts.length > 1) parts.pop();
  parts[parts.length - 1] = (parts[parts.length - 1] ?? 0) + 1;
  return parts.join('.');
}

export function satisfies(version: string, requirement: Requirement): boolean {
  const c = compareVersions(version, requirement.version);
  switch (requirement.operator) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '>':
      return c > 0;
    case '<':
      return c < 0;
    case '>=':
      return c >= 0;
    case '<=':
      return c <= 0;
    case '~>':
      return c >= 0 && compareVersions(version, pessimisticUpperBound(requirement.version)) < 0;
  }
}

export function satisfiesAll(version: string, requirements: readonly Requirement[]): boolean {
  return requirements.every((r) => satisfies(version, r));
}

export function formatRequirement(r: Requirement): string {
  return `${r.operator} ${r.version}`;
}

/** Greatest first. */
export function sortDescending(versions: readonly string[]): string[] {
  return [...versions].sort((a, b) => compareVersions(b, a));
}
