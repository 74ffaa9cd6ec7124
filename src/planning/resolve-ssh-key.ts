import { decide } from '../plan/decide.js';
import type { SshGitDependency } from '../buildpack/contract.js';
import type { EnvEntry } from '../env/assemble.js';
import { parseKnownHosts } from '../env/known-hosts.js';
import { parsePrivateKey, type PrivateKey } from '../env/ssh-key.js';
import { CoreErrors } from '../errors/core-errors.js';
import { CoreWarnings } from '../errors/core-warnings.js';
import { failureRule } from '../plan/failure-rule.js';
import type { Decision, PlanWarning, SshKeyPlan, StepFailureRule } from '../plan/schema.js';
import { displayUrl, remotePattern, sshRemote } from './ssh-remote.js';

export const SSH_KEY_VARIABLE = 'CC_SSH_PRIVATE_KEY';
export const SSH_KNOWN_HOSTS_VARIABLE = 'CC_SSH_KNOWN_HOSTS';

/** How ssh reports a host key it may not trust: unknown under strict checking, or changed. */
const HOST_KEY_REFUSED = /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No [A-Z0-9-]+ host key is known for/;
/** How ssh and the git forges report a key that was not accepted (or no key at all). */
const KEY_REFUSED = /Permission denied \([^)]*publickey[^)]*\)|ERROR: Repository not found|could not be found or you don't have permission/;

export interface SshKeyInput {
  /** CC_SSH_PRIVATE_KEY (withheld from the environment). */
  readonly key: EnvEntry | undefined;
  readonly knownHosts: EnvEntry | undefined;
  /** The application's own GIT_SSH_COMMAND, which the build's replaces. */
  readonly gitSshCommand: EnvEntry | undefined;
  /** The host gives a known_hosts file (--ssh-known-hosts, RUNPLAN_SSH_KNOWN_HOSTS). */
  readonly hostKnownHosts: boolean;
  /** What the buildpack's dependency step fetches over SSH. */
  readonly dependencies: readonly SshGitDependency[];
}

export interface ResolvedSshKey {
  /** build.sshKey: present when a key is given. */
  readonly sshKey?: SshKeyPlan;
  /** The `ssh-key` decision, when a key, known hosts or a dependency over SSH is there to explain. */
  readonly decision?: Decision;
  readonly warnings: PlanWarning[];
  /** For the dependency step: the refusals that name a dependency first. */
  readonly failureRules: StepFailureRule[];
}

/**
 * The private SSH key of the build (specification, Authentication: "added to the
 * application so that private dependencies can be fetched during build"):
 * validated here, before any build (RUNPLAN_E_SSH_KEY_INVALID), and planned as
 * build.sshKey, which names the variable only. Pure: entries in, plan parts out.
 */
export function resolveSshKey(input: SshKeyInput): ResolvedSshKey {
  const given = (e: EnvEntry | undefined) => (e !== undefined && e.value.trim() !== '' ? e : undefined);
  const keyEntry = given(input.key);
  const hostsEntry = given(input.knownHosts);
  const key = keyEntry ? parsePrivateKey(keyEntry.value, SSH_KEY_VARIABLE) : undefined;
  const knownHosts = hostsEntry ? knownHostEntries(hostsEntry.value) : undefined;
  const deps = input.dependencies.filter((d) => sshRemote(d.url) !== undefined);
  if (!key && !hostsEntry && deps.length === 0) return { warnings: [], failureRules: [] };

  const warnings: PlanWarning[] = [];
  const strict = knownHosts !== undefined || input.hostKnownHosts;
  const sourceNames = [...(knownHosts ? [SSH_KNOWN_HOSTS_VARIABLE] : []), ...(input.hostKnownHosts ? ["the host's known hosts file"] : [])];
  const sources = [...(knownHosts ? [`${SSH_KNOWN_HOSTS_VARIABLE} (${knownHosts} host key${knownHosts === 1 ? '' : 's'})`] : []), ...(input.hostKnownHosts ? ["the host's known hosts file"] : [])];
  const names = deps.map((d) => `${d.name} (${d.file})`);
  const overridden: Decision['overridden'] = [];
  let resolved: string;
  let reason: string;
  if (key) {
    const details = [key.algorithm, key.fingerprint].filter((d): d is string => d !== undefined);
    const what = `${key.format === 'OpenSSH' ? 'an' : 'a'} ${key.format} private key${details.length > 0 ? ` (${details.join(', ')})` : ''}`;
    const checking = strict
      ? `host keys checked strictly against ${sources.join(' and ')}`
      : 'no known hosts given: host keys trusted on first use (logged, then required by the later builds of the application)';
    resolved = `${what}, for git over SSH in the build steps only${names.length > 0 ? ` (${names.join(', ')})` : ''}; ${checking}`;
    reason = `the service adds the key to the application so that private dependencies can be fetched during the build: runplan writes it (0600) to a private directory outside the application, gives the build steps GIT_SSH_COMMAND="ssh -i <that file> -o IdentitiesOnly=yes …", and removes it when the build ends; no process of the run phase gets it${key.repaired ? `. The value was ${key.repaired}: it is written as a key file` : ''}`;
    if (!strict) {
      warnings.push(
        CoreWarnings.SSH_TRUST_ON_FIRST_USE.create({
          message: `no known hosts are given for ${SSH_KEY_VARIABLE}: the first host key each SSH server presents in a build is accepted and logged with its fingerprint, and the later builds of this application require that same key.`,
          variable: SSH_KNOWN_HOSTS_VARIABLE,
        }),
      );
    }
    if (input.gitSshCommand !== undefined) {
      overridden.push({
        source: `env GIT_SSH_COMMAND (${input.gitSshCommand.source})`,
        value: input.gitSshCommand.value,
        reason: `replaced in the build steps by the command that uses ${SSH_KEY_VARIABLE}`,
      });
    }
  } else {
    resolved = deps.length > 0 ? `no key: ${names.join(', ')} can only be fetched if the git server lets anyone read them` : 'no key';
    reason = `${SSH_KEY_VARIABLE} is not set, so git over SSH offers no key of the service's${hostsEntry ? `; ${SSH_KNOWN_HOSTS_VARIABLE} has nothing to check` : ''}`;
    if (hostsEntry) overridden.push({ source: `env ${SSH_KNOWN_HOSTS_VARIABLE} (${hostsEntry.source})`, value: null, reason: `ignored: it only applies with ${SSH_KEY_VARIABLE}` });
    if (deps.length > 0) {
      warnings.push(
        CoreWarnings.SSH_KEY_MISSING.create({
          message: `${names.join(', ')} ${deps.length === 1 ? 'is' : 'are'} fetched with git over SSH, but ${SSH_KEY_VARIABLE} is not set: the install fails unless the server lets anyone read ${deps.length === 1 ? 'it' : 'them'}.`,
          variable: SSH_KEY_VARIABLE,
        }),
      );
    }
  }
  const decision: Decision = decide({
    id: 'ssh-key',
    subject: 'Private SSH key for git dependencies',
    requests: [{ source: keyEntry ? `env ${SSH_KEY_VARIABLE} (${keyEntry.source})` : 'default', value: keyEntry ? 'a private key (secret, not shown)' : null }],
    resolved,
    reason,
    lost: overridden,
  });
  const sshKey: SshKeyPlan | undefined = key
    ? { variable: SSH_KEY_VARIABLE, knownHosts: { variable: knownHosts ? SSH_KNOWN_HOSTS_VARIABLE : null, hostFile: input.hostKnownHosts }, hostKeyChecking: strict ? 'strict' : 'trust-on-first-use' }
    : undefined;
  return { ...(sshKey ? { sshKey } : {}), decision, warnings, failureRules: refusalRules(deps, key, !key ? 'host' : strict ? sourceNames : 'trust-on-first-use') };
}

function knownHostEntries(value: string): number {
  const { entries, invalid } = parseKnownHosts(value);
  const first = invalid[0];
  if (first !== undefined) {
    throw CoreErrors.SSH_KNOWN_HOSTS_INVALID.create({
      message: `line ${first.line} of ${SSH_KNOWN_HOSTS_VARIABLE}, ${first.text}, is not a known_hosts entry (host names, key type, base64 key of that type)${invalid.length > 1 ? `; ${invalid.length - 1} more line(s) are not either` : ''}.`,
      variable: SSH_KNOWN_HOSTS_VARIABLE,
    });
  }
  if (entries.length === 0) {
    throw CoreErrors.SSH_KNOWN_HOSTS_INVALID.create({ message: `${SSH_KNOWN_HOSTS_VARIABLE} holds no known_hosts entry (only comments or blank lines).`, variable: SSH_KNOWN_HOSTS_VARIABLE });
  }
  return entries.length;
}

/**
 * How the dependency step's failure is told when a git server over SSH refused
 * it: first the refusals that also name one of the dependencies (the package
 * managers print the URL they fetched), then any refusal.
 */
function refusalRules(deps: readonly SshGitDependency[], key: PrivateKey | undefined, knownHosts: readonly string[] | 'trust-on-first-use' | 'host'): StepFailureRule[] {
  if (deps.length === 0 && key === undefined) return [];
  const keyWhy = key
    ? `the server did not accept the key of ${SSH_KEY_VARIABLE}${key.fingerprint ? ` (${key.fingerprint})` : ' (its fingerprint is in the build log)'}`
    : `${SSH_KEY_VARIABLE} is not set, so no key was offered`;
  const keyFix = key
    ? `Add the public half of the key of ${SSH_KEY_VARIABLE} (\`ssh-keygen -y -f KEY\`) to that repository as a read-only deploy key, or set ${SSH_KEY_VARIABLE} to a key the server accepts.`
    : undefined;
  const hostWhy =
    knownHosts === 'trust-on-first-use'
      ? 'its host key changed since an earlier build of this application trusted it on first use'
      : `its host key is not among the known hosts given (${knownHosts === 'host' ? 'none' : knownHosts.join(' and ')}), or differs from the one given`;
  const hostFix =
    knownHosts === 'trust-on-first-use'
      ? `If the server's key changed legitimately, give its new key in ${SSH_KNOWN_HOSTS_VARIABLE} (checked against the fingerprint its operator publishes); otherwise someone may stand between the build and the git server.`
      : undefined;
  // Without a key, ssh is left to the host's own configuration, which may not know the server either: the missing key is the cause to fix.
  const hostRefused = (when: StepFailureRule['when'], subject: string, server: string): StepFailureRule =>
    key
      ? failureRule(CoreErrors.SSH_HOST_KEY_UNTRUSTED, when, {
          message: `${subject} could not be fetched over SSH: ssh refused ${server}, as ${hostWhy}.`,
          variable: SSH_KNOWN_HOSTS_VARIABLE,
          ...(hostFix ? { fix: hostFix } : {}),
        })
      : failureRule(CoreErrors.SSH_DEPENDENCY_DENIED, when, {
          message: `${subject} could not be fetched over SSH: ${SSH_KEY_VARIABLE} is not set, so the build has no key for it, and ssh, left to the host's own configuration, refused ${server} (it does not know its host key).`,
          variable: SSH_KEY_VARIABLE,
          fix: `Set ${SSH_KEY_VARIABLE} to a private key (without passphrase) that the git server accepts, e.g. a read-only deploy key; with it, the build checks the server's host key against ${SSH_KNOWN_HOSTS_VARIABLE} or the host's known hosts file, or trusts it on first use (logged).`,
        });
  const rules: StepFailureRule[] = [];
  for (const dep of deps) {
    const remote = sshRemote(dep.url);
    if (!remote) continue;
    const pattern = remotePattern(remote);
    const what = `${dep.name} (${dep.file}: ${displayUrl(dep.url)})`;
    rules.push(
      hostRefused({ kind: 'output-all', patterns: [HOST_KEY_REFUSED.source, pattern] }, `the git dependency ${what}`, `the server ${remote.host}`),
      failureRule(
        CoreErrors.SSH_DEPENDENCY_DENIED,
        { kind: 'output-all', patterns: [KEY_REFUSED.source, pattern] },
        { message: `the git server refused the dependency ${what} over SSH: ${keyWhy}.`, variable: SSH_KEY_VARIABLE, ...(keyFix ? { fix: keyFix } : {}) },
      ),
    );
  }
  const others = deps.length > 0 ? ` (not one of ${deps.map((d) => d.name).join(', ')} by its address: a dependency of a dependency?)` : '';
  rules.push(
    hostRefused({ kind: 'output', pattern: HOST_KEY_REFUSED.source }, `a git dependency${others}`, 'its server (the output above names it)'),
    failureRule(
      CoreErrors.SSH_DEPENDENCY_DENIED,
      { kind: 'output', pattern: KEY_REFUSED.source },
      { message: `a git server refused a dependency over SSH${others}: ${keyWhy}; the output above names it.`, variable: SSH_KEY_VARIABLE, ...(keyFix ? { fix: keyFix } : {}) },
    ),
  );
  return rules;
}
