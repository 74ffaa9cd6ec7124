import type { RestartPolicy } from '../plan/schema.js';
import { FLOOR_MAX_MS } from '../plan/restart-policy.js';
import { shellWord } from '../shell/shell-word.js';
import { S6 } from './s6-programs.js';

/**
 * The files of one s6 service directory, as text: what s6-supervise runs for
 * one process of a run (docs/engines.md, "The local engine's supervision
 * tree"). Pure, so each rule is tested without s6.
 */
export interface ServiceScriptInput {
  /** The process's name in the plan (web, nginx, sidekiq…). */
  readonly process: string;
  /** The command to execute, already wrapped in the application's walls when it has them (SandboxScope.command). */
  readonly argv: readonly string[];
  /** Without walls: where the process starts, and the user it drops to (with walls, the sandbox says both). */
  readonly cwd?: string;
  readonly drop?: { readonly uid: number; readonly gid: number };
  /** The file of the process's environment (envFileText), read when it starts: never on a command line `ps` shows. */
  readonly envFile: string;
  /** A token of the run's own: a line of the log that starts with it is the supervisor's, not the process's (the process never sees it). */
  readonly marker: string;
  readonly restart: RestartPolicy;
  readonly stopGraceMs: number;
  /** With walls, bubblewrap's monitor leads the process group: it must not get the stop signal (it would kill the sandbox at once). */
  readonly wrapped: boolean;
  /** The command that prints `true` while s6 wants the process up (default: s6-svstat of the service; a test gives its own). */
  readonly wantedUp?: string;
}

/** `run`: records the process group, then executes the process with only its own environment. */
export function runScript(input: ServiceScriptInput): string {
  const start = input.wrapped ? input.argv : [...(input.drop ? ['/usr/bin/setpriv', `--reuid=${input.drop.uid}`, `--regid=${input.drop.gid}`, '--clear-groups', '--'] : []), ...input.argv];
  return [
    '#!/bin/sh',
    `# runplan: process ${input.process}, kept running by s6-supervise; what it prints goes to ./log (s6-log).`,
    'exec 2>&1',
    // s6-supervise made this shell a session leader: its PID is the process group every stop signal goes to.
    'echo $$ > data/pgid',
    'date +%s%3N > data/started',
    ...(input.cwd === undefined || input.wrapped ? [] : [`cd ${shellWord(input.cwd)} || exit 126`]),
    // env -i: nothing of the supervisor's environment; the file is sourced by a shell that then becomes the process.
    `exec /usr/bin/env -i /bin/sh -c 'unset PWD OLDPWD; . "$0" && exec "$@"' ${[input.envFile, ...start].map(shellWord).join(' ')}`,
    '',
  ].join('\n');
}

/**
 * `finish`: run by s6-supervise each time the process ends. It ends what is
 * left of the process's group, decides by the plan's restart policy (never,
 * on-failure, always) whether it is started again and after which back-off
 * (the initial delay doubled at each exit in a row, up to the policy's
 * ceiling, never below runplan's floor for a crash loop), tells it as one
 * marked line of the log (the exit, read back by runplan), then waits out the
 * delay. s6 itself waits one more second before the next start: a delay under
 * a second is a second. Exit 125 tells s6 not to start it again.
 */
export function finishScript(input: ServiceScriptInput): string {
  const { restart } = input;
  const graceTenths = Math.ceil(input.stopGraceMs / 100);
  return [
    '#!/bin/sh',
    `# runplan: process ${input.process} ended ($1: its exit code, 256 when a signal ended it; $2: that signal).`,
    'if [ "$1" = 256 ]; then code=null; sig=$2; else code=$1; sig=0; fi',
    // bwrap exits 128 + N when its command was killed by signal N.
    ...(input.wrapped ? ['if [ "$code" != null ] && [ "$code" -gt 128 ] && [ "$code" -lt 193 ]; then sig=$((code - 128)); code=null; fi'] : []),
    'now=$(date +%s%3N); started=$(cat data/started 2>/dev/null || echo "$now"); ran=$((now - started))',
    'pgid=$(cat data/pgid 2>/dev/null || echo 0)',
    // Whether a live process (not a zombie some init has yet to reap) is left in the group: its state and group follow the command's ") " in /proc/N/stat.
    'alive() { for f in /proc/[0-9]*/stat; do read -r l < "$f" 2>/dev/null || continue; set -- ${l##*) }; [ "$1" != Z ] && [ "$3" = "$pgid" ] && return 0; done; return 1; }',
    // What the process left in its group (a daemon it started) is ended with it: TERM, its grace, KILL.
    `if [ "$pgid" -gt 1 ] && alive; then kill -TERM -$pgid 2>/dev/null; i=0; while [ $i -lt ${graceTenths} ] && alive; do sleep 0.1; i=$((i + 1)); done; kill -KILL -$pgid 2>/dev/null; fi`,
    // Stopped on purpose (s6-svc -O, -d): no restart, nothing to tell.
    `[ "$(${input.wantedUp ?? `${S6.svstat} -o wantedup .`})" = true ] || exit 125`,
    'inarow=$(cat data/inarow 2>/dev/null || echo 0); restarts=$(cat data/restarts 2>/dev/null || echo 0)',
    `if [ "$ran" -ge ${restart.resetAfterMs} ]; then inarow=1; else inarow=$((inarow + 1)); fi`,
    'echo "$inarow" > data/inarow',
    'failed=true; [ "$code" = 0 ] && failed=false',
    restart.policy === 'always' ? 'again=true' : restart.policy === 'never' ? 'again=false' : 'again=$failed',
    // The plan's delay: initial × 2^(inarow - 1), at most the ceiling; the floor: 100 ms × 2^(inarow - 2) from the second exit in a row, at most 10 s.
    `delay=${restart.initialDelayMs}; n=1; while [ $n -lt $inarow ] && [ $delay -lt ${restart.maxDelayMs} ]; do delay=$((delay * 2)); n=$((n + 1)); done`,
    `[ $delay -gt ${restart.maxDelayMs} ] && delay=${restart.maxDelayMs}`,
    `floor=0; if [ $inarow -ge 2 ]; then floor=100; n=2; while [ $n -lt $inarow ] && [ $floor -lt ${FLOOR_MAX_MS} ]; do floor=$((floor * 2)); n=$((n + 1)); done; [ $floor -gt ${FLOOR_MAX_MS} ] && floor=${FLOOR_MAX_MS}; fi`,
    '[ $floor -gt $delay ] && delay=$floor',
    'if [ $again = true ]; then restarts=$((restarts + 1)); echo "$restarts" > data/restarts; fi',
    `echo "${input.marker} {\\"exit\\":{\\"code\\":$code,\\"signal\\":$sig,\\"ranMs\\":$ran,\\"inARow\\":$inarow,\\"restarts\\":$restarts,\\"willRestart\\":$again,\\"delayMs\\":$delay}}"`,
    '[ $again = true ] || exit 125',
    // s6 adds a second of its own before the next start.
    'if [ $delay -gt 1000 ]; then sleep $(((delay - 1000) / 1000)).$(((delay - 1000) % 1000 / 100)); fi',
    'exit 0',
    '',
  ].join('\n');
}

/** How long s6 lets `finish` run: the longest back-off, the grace of what the process left, and room. */
export function finishTimeoutMs(input: Pick<ServiceScriptInput, 'restart' | 'stopGraceMs'>): number {
  return Math.max(input.restart.maxDelayMs, FLOOR_MAX_MS) + input.stopGraceMs + 5_000;
}

/** `log/run`: s6-log keeps the process's lines, stamped, in `dir` (10 files of 1 MB at most), whoever reads them later. */
export function logRunScript(dir: string): string {
  return ['#!/bin/sh', `exec ${S6.log} -b -- n10 s1000000 T ${shellWord(dir)}`, ''].join('\n');
}

/** The process's environment as a file `sh` sources: one `export NAME='value'` per variable (names are checked: letters, digits, _). */
export function envFileText(env: Readonly<Record<string, string>>): string {
  return Object.entries(env)
    .filter(([name]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    .map(([name, value]) => `export ${name}=${`'${value.replace(/'/g, `'\\''`)}'`}\n`)
    .join('');
}
