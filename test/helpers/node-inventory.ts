import type { BuildpackRegistry } from '../../src/buildpack/registry.js';
import { defaultRegistry } from '../../src/default-registry.js';
import { staticInventory } from '../../buildpacks/node/inventory.js';

/** Versions as the registry lists them, for plans made without the network. */
export const TEST_INVENTORY = staticInventory({
  node: ['18.20.8', '20.19.6', '22.23.3', '24.10.0', '24.21.0', '26.10.0'],
  npm: [
    { version: '10.9.2', engines: { node: '^18.17.0 || >=20.5.0' } },
    { version: '12.2.0', engines: { node: '^22.22.2 || ^24.15.0 || >=26.0.0' } },
  ],
  registry: 'https://registry.example.org/',
});

/** The built-in buildpacks, with the Node.js one planning against TEST_INVENTORY instead of the registry. */
export function offlineRegistry(): BuildpackRegistry {
  return defaultRegistry({ node: { inventory: TEST_INVENTORY } });
}
