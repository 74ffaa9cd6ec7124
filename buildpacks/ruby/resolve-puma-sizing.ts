import { decide, type Decision, type InstanceSize, type OverriddenSource } from '../../src/kit/index.js';
import { RubyErrors } from './errors.js';

/**
 * Puma workers and threads when neither CC_PUMA_* nor config/puma.rb sets them,
 * from the instance size the host declares. Workers are forked processes (memory
 * bound: about 512 MiB each for a Rails app), never more than the CPUs; threads
 * follow Rails' default of 5 except on the smallest instances.
 */
export const PUMA_SIZING_TABLE: readonly { readonly maxMemoryMb: number; readonly workers: number; readonly threads: number; readonly label: string }[] = [
  { maxMemoryMb: 1023, workers: 1, threads: 3, label: 'less than 1 GiB' },
  { maxMemoryMb: 2047, workers: 2, threads: 5, label: '1 GiB to less than 2 GiB' },
  { maxMemoryMb: 4095, workers: 4, threads: 5, label: '2 GiB to less than 4 GiB' },
  { maxMemoryMb: 8191, workers: 6, threads: 5, label: '4 GiB to less than 8 GiB' },
  { maxMemoryMb: Number.POSITIVE_INFINITY, workers: 8, threads: 5, label: '8 GiB or more' },
];

export function sizeFromInstance(instance: InstanceSize): { workers: number; threads: number; why: string } {
  const row = PUMA_SIZING_TABLE.find((r) => instance.memoryMb <= r.maxMemoryMb) ?? (PUMA_SIZING_TABLE[PUMA_SIZING_TABLE.length - 1] as (typeof PUMA_SIZING_TABLE)[number]);
  const workers = Math.max(1, Math.min(row.workers, instance.cpus));
  const capped = workers < row.workers ? `, capped at ${instance.cpus} CPU${instance.cpus > 1 ? 's' : ''}` : '';
  return {
    workers,
    threads: row.threads,
    why: `instance of ${instance.cpus} CPU${instance.cpus > 1 ? 's' : ''} and ${instance.memoryMb} MiB (${row.label}: ${row.workers} workers, ${row.threads} threads${capped})`,
  };
}

/** What config/puma.rb says about one setting. */
export type PumaRbSetting =
  | { readonly kind: 'absent' }
  | { readonly kind: 'literal'; readonly text: string; readonly min?: number; readonly max: number }
  | { readonly kind: 'env'; readonly text: string; readonly variable: string }
  | { readonly kind: 'other'; readonly text: string };

function codeLine(pumaRb: string, method: string): string | undefined {
  for (const raw of pumaRb.split(/\r?\n/)) {
    const line = raw.replace(/(^|\s)#.*$/, '$1').trim();
    if (new RegExp(`^${method}(\\s|\\(|$)`).test(line)) return line;
  }
  return undefined;
}

/**
 * Reads `workers …` and `threads …` of config/puma.rb: literal numbers, a
 * variable read through ENV (as Rails' generated file does with WEB_CONCURRENCY
 * and RAILS_MAX_THREADS, directly or through a local variable), or something else.
 */
export function readPumaRb(pumaRb: string | undefined): { workers: PumaRbSetting; threads: PumaRbSetting } {
  if (pumaRb === undefined) return { workers: { kind: 'absent' }, threads: { kind: 'absent' } };
  const read = (method: string): PumaRbSetting => {
    const text = codeLine(pumaRb, method);
    if (text === undefined) return { kind: 'absent' };
    const args = text
      .slice(method.length)
      .replace(/^\s*\(|\)\s*$/g, '')
      .trim();
    const numbers = args.split(',').map((a) => a.trim());
    if (numbers.every((n) => /^\d+$/.test(n)) && numbers.length >= 1 && numbers.length <= 2) {
      const values = numbers.map(Number);
      return values.length === 2 ? { kind: 'literal', text, min: values[0] as number, max: values[1] as number } : { kind: 'literal', text, max: values[0] as number };
    }
    const direct = /ENV(?:\.fetch\(|\[)\s*['"]([A-Z0-9_]+)['"]/.exec(args);
    if (direct) return { kind: 'env', text, variable: direct[1] as string };
    // `threads min_threads_count, max_threads_count` with each assigned from ENV earlier.
    for (const name of numbers.reverse()) {
      const assignment = new RegExp(`^\\s*${name.replace(/[^A-Za-z0-9_]/g, '')}\\s*=\\s*ENV(?:\\.fetch\\(|\\[)\\s*['"]([A-Z0-9_]+)['"]`, 'm').exec(pumaRb);
      if (assignment && /^[a-z_][a-z0-9_]*$/.test(name)) return { kind: 'env', text, variable: assignment[1] as string };
    }
    return { kind: 'other', text };
  };
  return { workers: read('workers'), threads: read('threads') };
}

export interface PumaSizingInput {
  readonly env: { readonly get: (name: string) => string | undefined };
  readonly pumaRb: string | undefined;
  readonly instance: InstanceSize;
}

export interface PumaSizing {
  readonly workers: number;
  readonly minThreads: number;
  readonly maxThreads: number;
  /** Command-line options for puma (empty when config/puma.rb decides). */
  readonly args: readonly string[];
  readonly decisions: readonly Decision[];
  /** WEB_CONCURRENCY and RAILS_MAX_THREADS (filled only when absent). */
  readonly envDefaults: readonly { name: string; value: string; reason: string }[];
}

/**
 * Puma workers and threads (specification, Ruby rule 5): CC_PUMA_WORKERS and
 * CC_PUMA_THREADS (`n` or `min:max`) win over config/puma.rb; when neither sets
 * a value it comes from the instance size (PUMA_SIZING_TABLE). Values runplan
 * decides are passed as `-w` / `-t`, which Puma applies over its configuration
 * file; WEB_CONCURRENCY and RAILS_MAX_THREADS are filled when absent, so a
 * config/puma.rb that reads them sees the same numbers. One worker from the
 * instance size is Puma's single mode (`-w 0`, WEB_CONCURRENCY=0).
 */
export function resolvePumaSizing({ env, pumaRb, instance }: PumaSizingInput): PumaSizing {
  const fromRb = readPumaRb(pumaRb);
  const table = sizeFromInstance(instance);
  const args: string[] = [];

  // Workers.
  const ccWorkers = nonEmpty(env.get('CC_PUMA_WORKERS'));
  const workersOverridden: OverriddenSource[] = [];
  let workers: number;
  let workersSource: string;
  let workersReason: string;
  if (ccWorkers !== undefined) {
    if (!/^\d+$/.test(ccWorkers) || Number(ccWorkers) > 256) throw invalid('CC_PUMA_WORKERS', ccWorkers, 'an integer from 0 to 256');
    workers = Number(ccWorkers);
    workersSource = 'env CC_PUMA_WORKERS';
    workersReason = 'CC_PUMA_WORKERS takes precedence over config/puma.rb (Ruby rule 5); passed as puma -w';
    args.push('-w', String(workers));
    if (fromRb.workers.kind !== 'absent') workersOverridden.push({ source: 'config/puma.rb', value: fromRb.workers.text, reason: 'CC_PUMA_WORKERS takes precedence' });
  } else if (fromRb.workers.kind === 'literal') {
    workers = fromRb.workers.max;
    workersSource = 'config/puma.rb';
    workersReason = `config/puma.rb sets it (\`${fromRb.workers.text}\`) and CC_PUMA_WORKERS is not set`;
  } else if (fromRb.workers.kind === 'env' && nonEmpty(env.get(fromRb.workers.variable)) !== undefined && /^\d+$/.test(env.get(fromRb.workers.variable) as string)) {
    workers = Number(env.get(fromRb.workers.variable));
    workersSource = `config/puma.rb via ${fromRb.workers.variable}`;
    workersReason = `config/puma.rb reads ${fromRb.workers.variable} (\`${fromRb.workers.text}\`), which is set`;
  } else {
    // One worker: Puma's single mode (-w 0) serves the same with one process less; Puma itself warns that a
    // cluster of one worker is "often a misconfiguration". CC_PUMA_WORKERS=1 still asks for that cluster.
    const single = table.workers === 1;
    workers = single ? 0 : table.workers;
    workersSource = 'instance size';
    workersReason = single
      ? `neither CC_PUMA_WORKERS nor config/puma.rb sets it: ${table.why}; one worker runs in Puma's single mode (puma -w 0: one process, no cluster master, as Puma advises for one worker); CC_PUMA_WORKERS=1 asks for a cluster of one worker instead`
      : `neither CC_PUMA_WORKERS nor config/puma.rb sets it: ${table.why}; passed as puma -w`;
    args.push('-w', String(workers));
    if (fromRb.workers.kind === 'env')
      workersOverridden.push({ source: 'config/puma.rb', value: fromRb.workers.text, reason: `reads ${fromRb.workers.variable}, which is unset: runplan fills it with the same value` });
    if (fromRb.workers.kind === 'other') workersOverridden.push({ source: 'config/puma.rb', value: fromRb.workers.text, reason: 'not a literal runplan can read; puma -w applies over it' });
  }

  // Threads.
  const ccThreads = nonEmpty(env.get('CC_PUMA_THREADS'));
  const threadsOverridden: OverriddenSource[] = [];
  let minThreads: number;
  let maxThreads: number;
  let threadsSource: string;
  let threadsReason: string;
  if (ccThreads !== undefined) {
    const m = /^(\d+)(?::(\d+))?$/.exec(ccThreads);
    const lo = Number(m?.[1]);
    const hi = m?.[2] === undefined ? lo : Number(m[2]);
    if (!m || lo < 1 || hi < lo || hi > 1024) throw invalid('CC_PUMA_THREADS', ccThreads, 'n or min:max with 1 <= min <= max <= 1024');
    [minThreads, maxThreads] = [lo, hi];
    threadsSource = 'env CC_PUMA_THREADS';
    threadsReason = 'CC_PUMA_THREADS takes precedence over config/puma.rb (Ruby rule 5); passed as puma -t';
    args.push('-t', `${minThreads}:${maxThreads}`);
    if (fromRb.threads.kind !== 'absent') threadsOverridden.push({ source: 'config/puma.rb', value: fromRb.threads.text, reason: 'CC_PUMA_THREADS takes precedence' });
  } else if (fromRb.threads.kind === 'literal') {
    maxThreads = fromRb.threads.max;
    minThreads = fromRb.threads.min ?? maxThreads;
    threadsSource = 'config/puma.rb';
    threadsReason = `config/puma.rb sets it (\`${fromRb.threads.text}\`) and CC_PUMA_THREADS is not set`;
  } else if (fromRb.threads.kind === 'env' && /^\d+$/.test(env.get(fromRb.threads.variable) ?? '')) {
    maxThreads = Number(env.get(fromRb.threads.variable));
    minThreads = /^\d+$/.test(env.get('RAILS_MIN_THREADS') ?? '') ? Number(env.get('RAILS_MIN_THREADS')) : maxThreads;
    threadsSource = `config/puma.rb via ${fromRb.threads.variable}`;
    threadsReason = `config/puma.rb reads ${fromRb.threads.variable} (\`${fromRb.threads.text}\`), which is set`;
  } else {
    minThreads = maxThreads = table.threads;
    threadsSource = 'instance size';
    threadsReason = `neither CC_PUMA_THREADS nor config/puma.rb sets it: ${table.why}; passed as puma -t`;
    args.push('-t', `${minThreads}:${maxThreads}`);
    if (fromRb.threads.kind === 'env')
      threadsOverridden.push({ source: 'config/puma.rb', value: fromRb.threads.text, reason: `reads ${fromRb.threads.variable}, which is unset: runplan fills it with the same value` });
    if (fromRb.threads.kind === 'other') threadsOverridden.push({ source: 'config/puma.rb', value: fromRb.threads.text, reason: 'not a literal runplan can read; puma -t applies over it' });
  }

  for (const [name, value, list] of [
    ['WEB_CONCURRENCY', String(workers), workersOverridden],
    ['RAILS_MAX_THREADS', String(maxThreads), threadsOverridden],
  ] as const) {
    const set = env.get(name);
    if (set !== undefined && set !== value && !(name === 'WEB_CONCURRENCY' ? workersSource : threadsSource).includes(name)) {
      list.push({ source: `env ${name}`, value: set, reason: `${name === 'WEB_CONCURRENCY' ? workersSource : threadsSource} decides; ${name} is passed to the application as set` });
    }
  }

  return {
    workers,
    minThreads,
    maxThreads,
    args,
    decisions: [
      decide({
        id: 'ruby.puma.workers',
        subject: 'Puma workers',
        requests: [{ source: workersSource, value: ccWorkers ?? null }],
        resolved: workers === 0 ? '0 (single mode)' : String(workers),
        reason: workersReason,
        lost: workersOverridden,
      }),
      decide({
        id: 'ruby.puma.threads',
        subject: 'Puma threads per worker (min:max)',
        requests: [{ source: threadsSource, value: ccThreads ?? null }],
        resolved: `${minThreads}:${maxThreads}`,
        reason: threadsReason,
        lost: threadsOverridden,
      }),
    ],
    envDefaults: [
      { name: 'WEB_CONCURRENCY', value: String(workers), reason: 'the Puma workers, for a config/puma.rb or code that reads it' },
      { name: 'RAILS_MAX_THREADS', value: String(maxThreads), reason: 'the Puma threads per worker, for a config/puma.rb or code that reads it' },
    ],
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function invalid(variable: string, value: string, expected: string) {
  return RubyErrors.RUBY_PUMA_SETTING_INVALID.create({ message: `${variable}=${JSON.stringify(value)} is not ${expected}.`, variable });
}
