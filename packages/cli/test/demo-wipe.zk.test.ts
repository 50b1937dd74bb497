/**
 * The demo starts each run afresh by wiping its world (src/demo/wipe.ts). On a real ZooKeeper,
 * after a real demo run and with something in every area the world has, the wipe leaves
 * nothing of the world behind: the whole namespace is walked, not the layout's own list, so
 * a node in an area the wipe does not know would show. Another world is left as it was.
 */
import {
  addSchedule,
  type Coordinator,
  createEngine,
  isZoottError,
  setRateLimit,
} from '@zoott/core';
import { worldAreaNodes, worldRoot } from '@zoott/core/internal';
import { describe, expect, it } from 'vitest';
import { wipeWorld } from '../src/demo/wipe.js';
import { assertBuilt, freshConnect, json, session, zoott } from './helpers.js';

const SLOW = 240_000;

/** Every node of the namespace, depth first, parents before children. */
async function walk(coordinator: Coordinator, path = '/'): Promise<string[]> {
  const names = await coordinator.children(path).catch((err: unknown) => {
    if (isZoottError(err, 'NO_NODE')) return [] as string[];
    throw err;
  });
  const below = await Promise.all(
    names.map((name) => walk(coordinator, path === '/' ? `/${name}` : `${path}/${name}`)),
  );
  return [...(path === '/' ? [] : [path]), ...below.flat()];
}

describe('zoott demo: wiping its world', { timeout: SLOW }, () => {
  it('leaves nothing of the world behind, and another world as it was', async () => {
    assertBuilt();
    const connect = await freshConnect();
    const run = await zoott(
      ['--connect', connect, '--json', 'demo', '--items', '3', '--workers', '1'],
      { timeoutMs: 180_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(json<{ summary: { completed: number } }>(run).summary.completed).toBe(9);
    const coordinator = await session(connect);
    const demo = createEngine(coordinator, { world: 'demo' });
    // What the demo does not write itself: a schedule, a rate limit, a task still waiting, and
    // a node in every area the world has (quarantine, parked results, replies, races...).
    await addSchedule(demo, { name: 'nightly', cron: '0 3 * * *', type: 'report' });
    await setRateLimit(demo, 'report', '5/s');
    await demo.queue({ name: 'waiting', type: 'report' });
    for (const areaNode of worldAreaNodes('demo')) {
      const made = await coordinator.create(`${areaNode}/left-`, undefined, { sequential: true });
      await coordinator.create(`${made}/deeper`);
    }
    const other = createEngine(coordinator, { world: 'other' });
    await other.init();
    await other.queue({ name: 'kept', type: 'report' });
    await addSchedule(other, { name: 'hourly', cron: '0 * * * *', type: 'report' });
    const before = await walk(coordinator);
    const ofOther = (paths: string[]) =>
      paths.filter(
        (path) => path.split('/').includes('zoott_other') || path.split('/')[2] === 'other',
      );
    expect(before.filter((path) => path.split('/')[2] === 'demo').length).toBeGreaterThan(
      worldAreaNodes('demo').length,
    );

    await wipeWorld(coordinator, 'demo');

    const after = await walk(coordinator);
    // What stays of the world: its (empty) node in each area, which belongs to the namespace's
    // shared area node and may not be deleted. Its tree root is gone.
    const areaNodes = new Set(worldAreaNodes('demo'));
    const leftOver = after.filter(
      (path) =>
        path.split('/').some((part) => part === 'demo' || part === 'zoott_demo') &&
        !areaNodes.has(path),
    );
    expect(leftOver).toEqual([]);
    for (const areaNode of areaNodes) expect(await coordinator.children(areaNode)).toEqual([]);
    expect(await coordinator.exists(worldRoot('demo'))).toBeNull();
    expect(ofOther(after)).toEqual(ofOther(before));
    // And the demo runs again on the wiped world.
    const again = await zoott(
      ['--connect', connect, '--json', 'demo', '--items', '2', '--workers', '1', '--in-process'],
      { timeoutMs: 180_000 },
    );
    expect(again.code, again.stderr).toBe(0);
  });
});
