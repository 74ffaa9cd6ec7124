import { describeHost } from './helpers/host-e2e-suite.js';
import { readFileSync } from 'node:fs';
import { processesUnder } from '../../test/helpers/processes.js';

/** runplan-host end to end with its releases on this machine and its store in SQLite (host/test/helpers/host-e2e-suite.ts). */
describeHost({
  name: 'local',
  initArgs: async () => [],
  sideBySide: true,
  // init's own network: the releases' gateway, which the machine reaches too.
  addonHost: /^10\.88\.\d+\.1$/,
  // The specification's lines, as runplan's health gate prints them.
  failedGate: {
    code: 'RUNPLAN_E_HEALTH_CHECK_FAILED',
    lines: ['remote: Response from GET /health is 500', 'remote: Health check failed:', 'remote: - GET /health returned 500.'],
  },
  // Each with its command line and state, so that a process left behind names itself in the failure.
  leftBehind: async (host) => processesUnder(host.data).map((pid) => `process ${pid}: ${describeProcess(pid)}`),
});

function describeProcess(pid: number): string {
  try {
    return `${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()} (state ${/State:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '?'})`;
  } catch {
    return 'gone meanwhile';
  }
}
