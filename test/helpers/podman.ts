import { existsSync } from 'node:fs';
import { PodmanCli } from '../../src/engines/podman-cli.js';

/**
 * Podman for the tests: runplan's own (src/engines/podman-cli.ts), with its
 * storage, runtime files, events and configuration under one temporary
 * directory; remove() takes it all away and returns whatever is left.
 */
export function podmanAvailable(): boolean {
  return ['/usr/bin/podman', '/usr/local/bin/podman'].some((p) => existsSync(p));
}

export function startPodman(): Promise<PodmanCli> {
  return PodmanCli.create();
}
