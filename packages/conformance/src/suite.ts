import { afterEach, beforeEach, describe } from 'vitest';
import { ContextManager } from './context.js';
import type { GroupTests } from './group.js';
import { aclTests } from './groups/acl.js';
import { crudTests } from './groups/crud.js';
import { ephemeralTests } from './groups/ephemeral.js';
import { limitsTests } from './groups/limits.js';
import { multiTests } from './groups/multi.js';
import { multiLimitsTests, multiSamePathTests } from './groups/multi-limits.js';
import { sequentialTests } from './groups/sequential.js';
import { sessionTests } from './groups/session.js';
import { treeWatchTests } from './groups/tree-watch.js';
import { versionsTests } from './groups/versions.js';
import { watchesTests } from './groups/watches.js';
import type { CoordinatorHarness, HarnessSource, SuiteGroup } from './harness.js';

const GROUPS: ReadonlyArray<readonly [SuiteGroup, string, GroupTests]> = [
  ['crud', 'create, read, update, delete', crudTests],
  ['versions', 'versions and compare-and-set', versionsTests],
  ['sequential', 'sequential nodes', sequentialTests],
  ['ephemeral', 'ephemeral nodes', ephemeralTests],
  ['multi', 'multi (transactions)', multiTests],
  ['multi', 'multi: several ops on one node', multiSamePathTests],
  ['watches', 'watches', watchesTests],
  ['treeWatch', 'tree watches (persistent, recursive)', treeWatchTests],
  ['acl', 'ACLs and authentication', aclTests],
  ['limits', 'limits and bad arguments', limitsTests],
  ['limits', 'multi size limits and the order of checks', multiLimitsTests],
  ['session', 'sessions', sessionTests],
];

/**
 * Registers the Coordinator conformance suite (vitest `describe`/`it` blocks) for one adapter.
 *
 * A factory is called once when the suite is registered (to read `name`, `skip` and whether
 * `dropConnection` exists) and once before every test, so it may hand out fresh state.
 * Every test works under its own `/conf-<random>` node and closes every client it opened.
 */
export function coordinatorSuite(source: HarnessSource): void {
  const resolve = (): CoordinatorHarness => (typeof source === 'function' ? source() : source);
  const declared = resolve();
  const manager = new ContextManager();

  describe(`Coordinator conformance: ${declared.name}`, () => {
    beforeEach(async () => {
      await manager.setUp(resolve());
    });
    afterEach(async () => {
      await manager.tearDown();
    });

    for (const [group, title, register] of GROUPS) {
      // A skipped group is not registered at all: the reason lives in the adapter's README.
      if (declared.skip?.[group] !== undefined) continue;
      describe(`${group}: ${title}`, () => {
        register(() => manager.context, declared);
      });
    }
  });
}
