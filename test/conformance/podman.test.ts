import { conformanceSuite } from './conformance-suite.js';

conformanceSuite('podman');
