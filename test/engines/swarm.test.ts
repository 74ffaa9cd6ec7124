import { describeHostOnSwarm } from '../../host/test/host-swarm.js';
import { conformanceSuite } from '../conformance/conformance-suite.js';
import { describeSwarmDeploy } from './swarm-deploy.js';

/**
 * Every test that makes the test engine a swarm, in one file. Each suite joins
 * and leaves the swarm, so two at once would pull it from under each other; as
 * separate files they took turns on a lock while a test worker sat idle for
 * minutes (and a wait longer than a hook's timeout failed a run). Here they run
 * one after the other on one worker while the other worker runs the rest.
 */
describeSwarmDeploy();
conformanceSuite('swarm');
describeHostOnSwarm();
