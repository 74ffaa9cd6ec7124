import { lowerPlan } from '../../src/lowering/lower.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultImageTag } from '../../src/engines/image/build-image.js';
import { IMAGE_BINDINGS, renderEntrypoint } from '../../src/engines/image/scripts.js';
import { proxyConfig } from '../../src/engines/swarm/proxy-config.js';
import { processGroups } from '../../src/lowering/process-groups.js';
import { createArgs, type ProcessServiceInput, processServices, proxyService, taskHash, updateArgs } from '../../src/engines/swarm/services.js';
import type { RunPlan } from '../../src/plan/schema.js';
import { parsePlan } from '../../src/planning/create-plan.js';
import { ROOT } from '../helpers/cli.js';

const golden = (path: string): RunPlan => parsePlan(JSON.parse(readFileSync(join(ROOT, 'test', 'golden', path), 'utf8')));
const sidekiq = golden('ruby/rails-sidekiq.json');
const express = golden('node/default-lts.json');
/** The Express plan's services' input, lowered as for its image, with what a case changes. */
const expressInput = (changes: Partial<ProcessServiceInput> = {}): ProcessServiceInput => ({
  app: 'express',
  lowered: lowerPlan(express, IMAGE_BINDINGS),
  image: 'runplan/express:1',
  imageId: 'sha256:1',
  replicas: 2,
  secrets: {},
  ...changes,
});

describe('swarm services of a plan', () => {
  it('runs nginx and Puma (nginx waits on the socket Puma opens in ${RUN_DIR}) as one service, sidekiq as another', () => {
    const groups = processGroups(sidekiq).map((g) => [g.main.name, ...g.helpers.map((h) => h.name)]);
    expect(groups).toEqual([['web', 'puma'], ['sidekiq']]);
    const [web, worker] = processServices({
      app: 'shop',
      lowered: lowerPlan(sidekiq, IMAGE_BINDINGS),
      image: 'runplan/shop:1',
      imageId: 'sha256:1',
      replicas: 3,
      secrets: { SECRET_KEY_BASE: 'shop-SECRET_KEY_BASE-0123' },
    });
    expect(web).toMatchObject({ name: 'shop-web', args: ['--group', 'web', 'puma'], replicas: 3, health: 'image', updateOrder: 'start-first' });
    expect(worker).toMatchObject({ name: 'shop-sidekiq', args: ['sidekiq'], replicas: 1, health: 'none' });
    // The secret reaches the tasks as a file named like the variable, never as a value.
    expect(web!.secrets).toEqual([{ source: 'shop-SECRET_KEY_BASE-0123', target: 'SECRET_KEY_BASE' }]);
    expect(createArgs(worker!, 'shop-net', false)).toContain('--no-healthcheck');
  });

  it('runs a process waiting on a socket no other process names with every other process, as Kubernetes does (the one rule of src/lowering/process-groups.ts)', () => {
    const plan = structuredClone(sidekiq) as { -readonly [K in keyof RunPlan]: RunPlan[K] };
    plan.processes = sidekiq.processes.map((p) => (p.name === 'puma' ? { ...p, command: { kind: 'exec' as const, argv: ['bundle', 'exec', 'puma'] } } : p));
    expect(processGroups(plan).map((g) => [g.main.name, ...g.helpers.map((h) => h.name)])).toEqual([['web', 'puma', 'sidekiq']]);
  });

  it("creates the web service with DNS round robin, a start-first update rolled back on failure, the plan's restart and stop grace", () => {
    const [web] = processServices(expressInput({ secrets: { API_TOKEN: 'express-API_TOKEN-abc' } }));
    const args = createArgs(web!, 'express-net', false).join(' ');
    expect(args).toContain('--network express-net --endpoint-mode dnsrr');
    expect(args).toContain('--replicas 2');
    expect(args).toContain('--update-order start-first');
    expect(args).toContain('--update-failure-action rollback');
    expect(args).toContain(`--restart-condition any --restart-delay ${express.processes[0]!.restart.initialDelayMs}ms`);
    expect(args).toContain(`--stop-grace-period ${express.processes[0]!.stopGraceMs}ms`);
    expect(args).toContain('--secret source=express-API_TOKEN-abc,target=API_TOKEN,uid=1000,gid=1000,mode=0400');
    expect(args).not.toContain('--no-healthcheck');
    expect(args.endsWith('runplan/express:1 web')).toBe(true);
  });

  it("holds each task to its instance with no capability, as the local engine's walls do (issue 35)", () => {
    const [web] = processServices(expressInput({ limits: { cpus: 1, memoryMb: 1024, processes: 1024 } }));
    const args = createArgs(web!, 'express-net', false).join(' ');
    expect(args).toContain('--cap-drop ALL --limit-cpu 1 --limit-memory 1024M --limit-pids 1024');
    // An update sets them again: a task replaced by an update keeps its walls.
    expect(updateArgs(web!, 'express-net', { secrets: [], configs: [], publishedTargets: [], sysctls: [], labels: {} }, false).join(' ')).toContain('--limit-memory 1024M');
  });

  it('publishes the proxy in host mode, stops it first, and resolves the web service per request', () => {
    const proxy = proxyService({ app: 'express', image: 'runplan/stack-proxy:x', imageId: 'sha256:2', port: 8080, config: 'express-proxy-abc' });
    const args = createArgs(proxy, 'express-net', false).join(' ');
    expect(args).toContain('--publish mode=host,target=8080,published=8080,protocol=tcp');
    expect(args).toContain('--update-order stop-first');
    expect(args).toContain('--config source=express-proxy-abc,target=/etc/runplan/nginx.conf');
    const conf = proxyConfig({ upstreamHost: 'express-web', port: 8080 });
    expect(conf).toContain('resolver 127.0.0.11 valid=1s');
    expect(conf).toContain('set $upstream http://express-web:8080;');
    expect(conf).toContain('proxy_next_upstream error timeout http_502 http_503;');
  });

  it('changes the task specification with the image content, not with the replicas', () => {
    const input = expressInput();
    const [a] = processServices(input);
    const [b] = processServices({ ...input, replicas: 5 });
    const [c] = processServices({ ...input, imageId: 'sha256:2' });
    expect(taskHash(b!, 'n')).toBe(taskHash(a!, 'n'));
    expect(taskHash(c!, 'n')).not.toBe(taskHash(a!, 'n'));
  });

  it('swaps a secret whose value changed by name on update', () => {
    const [web] = processServices({
      app: 'express',
      lowered: lowerPlan(express, IMAGE_BINDINGS),
      image: 'runplan/express:2',
      imageId: 'sha256:2',
      replicas: 2,
      secrets: { API_TOKEN: 'express-API_TOKEN-new' },
    });
    const args = updateArgs(web!, 'express-net', { secrets: ['express-API_TOKEN-old'], configs: [], publishedTargets: [], sysctls: [], labels: {} }, false);
    expect(args.join(' ')).toContain('--secret-rm express-API_TOKEN-old --secret-add source=express-API_TOKEN-new,target=API_TOKEN');
    expect(args).toContain('--image');
    expect(args.at(-1)).toBe('express-web');
  });

  it("joins the processes to the other networks asked for, and an update adds and removes only those it attached (the application's own stays)", () => {
    const input = { app: 'express', lowered: lowerPlan(express, IMAGE_BINDINGS), image: 'runplan/express:2', imageId: 'sha256:2', replicas: 2, secrets: {} };
    const [web] = processServices({ ...input, networks: ['host-addons'] });
    expect(createArgs(web!, 'express-net', false).join(' ')).toContain('--network express-net --network host-addons --endpoint-mode dnsrr');
    const [alone] = processServices(input);
    const current = (networks: string) => ({ secrets: [], configs: [], publishedTargets: [], sysctls: [], labels: { 'io.runplan.networks': networks } });
    expect(updateArgs(web!, 'express-net', current(''), false)).toEqual(expect.arrayContaining(['--network-add', 'host-addons']));
    expect(updateArgs(web!, 'express-net', current('host-addons'), false)).not.toContain('--network-add');
    const removed = updateArgs(alone!, 'express-net', current('host-addons,old-net'), false).join(' ');
    expect(removed).toContain('--network-rm host-addons --network-rm old-net');
    expect(removed).not.toContain('express-net');
    expect(taskHash(web!, 'n')).not.toBe(taskHash(alone!, 'n'));
  });

  it("tags an image after the application's name when it has one, else its directory's", () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    expect(defaultImageTag('/srv/apps/app_1/source', digest, 'app-1')).toBe('runplan/app-1:abababababab');
    expect(defaultImageTag('/srv/apps/shop', digest)).toBe('runplan/shop:abababababab');
  });

  it('gives the image an entrypoint that reads secret files and starts a group of processes', () => {
    const script = renderEntrypoint(lowerPlan(sidekiq, IMAGE_BINDINGS), 'sha256:0');
    expect(script).toContain('if [ -f /run/secrets/SECRET_KEY_BASE ]; then SECRET_KEY_BASE="$(cat /run/secrets/SECRET_KEY_BASE; printf x)"');
    expect(script).toContain('exec /usr/bin/tini -g -- "$0" --group "$@"');
  });
});
