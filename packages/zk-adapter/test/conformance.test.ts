import { coordinatorSuite } from '@zoott/conformance';
import { zooKeeperHarness } from './conformance-harness.js';
import { zkServer } from './helpers.js';

coordinatorSuite(zooKeeperHarness('zookeeper 3.8 (node-zookeeper-client, patched)', zkServer));
