import { type Coordinator, createEngine, type Engine } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import {
  delayingEvents,
  eventually,
  memoryLogger,
  oneBucketEngine,
  parentAndChild,
  TestClock,
} from '../engine/helpers.js';

/** More roots than "plenty of work": the claimer serves its cached listing between changes. */
const ROOTS = 40;

/**
 * A claimer's coordinator that runs `afterListing` once after the next listing of the bucket
 * (before the claimer sees the reply) and `afterAncestorRead` once after the next read of
 * the parent's tree node: places to change the world at the exact moments a claim of the
 * child depends on.
 */
function intercepting(
  raw: Coordinator,
  bucket: string,
  parentTree: string,
  hooks: { afterListing?: () => Promise<void>; afterAncestorRead?: () => Promise<void> },
): Coordinator {
  return new Proxy(raw, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (prop === 'childrenWithStat')
        return async (...args: Parameters<Coordinator['childrenWithStat']>) => {
          const out = await target.childrenWithStat(...args);
          const hook = hooks.afterListing;
          if (args[0] === bucket && hook) {
            hooks.afterListing = undefined;
            await hook();
            // A read on this connection is answered after the change events before it: the
            // claimer hears of the hook's change before it sees this listing.
            await target.children(bucket);
          }
          return out;
        };
      if (prop === 'exists')
        return async (...args: Parameters<Coordinator['exists']>) => {
          const out = await target.exists(...args);
          const hook = hooks.afterAncestorRead;
          if (args[0] === parentTree && hook) {
            hooks.afterAncestorRead = undefined;
            await hook();
          }
          return out;
        };
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describeOnBackends(
  'engine: a child claimed from a listing that has not seen every change',
  (backend) => {
    type Hooks = Parameters<typeof intercepting>[3];

    /**
     * p (completed by the time the hooks run), its child p/c, and ROOTS roots, in one bucket;
     * `hooks` get the engine of another client, to change the world with.
     */
    async function setup(hooks: (other: Engine) => Hooks) {
      const { world, other } = await parentAndChild(() => backend().connect(), ROOTS);
      const raw = await backend().connect();
      const on = (h: Hooks) =>
        createEngine(intercepting(raw, `/zoott_p/${world}/0000`, `/zoott_${world}/p`, h), {
          world,
          buckets: 1,
          clock: new TestClock(),
          logger: memoryLogger(),
        });
      const first = on({});
      const parent = await first.claim();
      expect(parent?.key).toEqual(['p']);
      expect((await first.complete(parent!, 'done')).status).toBe('completed');
      // Armed only now: the next listing is the one read after the parent's completion.
      return { other, armed: on(hooks(other)), raw };
    }

    /** A change in the bucket whose event reaches the claimer before the listing's reply. */
    const noise = (other: Engine) => () =>
      other
        .queue({ name: `noise${Math.random().toString(36).slice(2)}`, type: 'other' })
        .then(() => {});
    const queueParentAgain = (other: Engine) => async () => {
      await other.queue({ name: 'p', type: 't', data: 'again' });
    };

    /** The next claim does not take the child, which stays pending behind its parent. */
    async function heldBack({ armed, other, raw }: Awaited<ReturnType<typeof setup>>) {
      expect((await armed.claim())?.key).not.toEqual(['p', 'c']);
      expect(await other.task(['p', 'c'])).toMatchObject({ state: 'pending' });
      await raw.close();
    }

    it('with no ancestor changed, the child goes first, checked', async () => {
      const { armed, raw } = await setup((other) => ({ afterListing: noise(other) }));
      expect((await armed.claim())?.key).toEqual(['p', 'c']);
      await raw.close();
    });

    it('a parent queued again after the listing was read, before the claim: the claim is refused', async () => {
      await heldBack(
        await setup((other) => ({
          afterListing: noise(other),
          // The parent's tree node as read is current; the re-queue lands right after.
          afterAncestorRead: queueParentAgain(other),
        })),
      );
    });

    it('a parent queued again before its tree node was read, unseen by the listing: the child is not taken', async () => {
      // The re-queue lands after the listing was read: the listing lacks the parent's new
      // entry, and its event makes the listing not up to date.
      await heldBack(await setup((other) => ({ afterListing: queueParentAgain(other) })));
    });
  },
);

describeOnBackends(
  "engine: a child claimed from an up-to-date listing while its parent's re-queue is on its way",
  (backend) => {
    /**
     * p and its child p/c, queued by `other`; a claimer of another client (`entryEvents`:
     * learning of changes from tree watches, else from children watches) whose watch events
     * can be held back. With `parentHere` the claimer claims p itself (reading p/c and p's tree
     * node ahead while p runs) and completes it; else `other` does. Either way the claimer's
     * listing is then read again: it shows p/c alone and has seen every change.
     */
    async function upToDate(entryEvents: boolean, parentHere: boolean) {
      const { world, other } = await parentAndChild(() => backend().connect(), 0);
      const raw = await backend().connect();
      const delayed = delayingEvents(raw);
      const engine = oneBucketEngine(delayed.coordinator, world);
      const claimer = await engine.claimer({ worker: 'w', entryEvents });
      claimer.setWatched([0]);
      if (entryEvents) await eventually(() => delayed.treeWatches() === 1);
      const parent = await (parentHere ? claimer.claim([0]) : other.claim());
      expect(parent?.key).toEqual(['p']);
      // The claimer's first call (a listing is kept only within the session of its calls).
      if (!parentHere) expect(await claimer.claim([0])).toBeNull();
      if (parentHere) {
        const st = claimer.listings.get(0)!;
        await eventually(() => st.guardStats.has('p') && st.cache.size === 2);
      }
      expect((await (parentHere ? engine : other).complete(parent!, 'done')).status).toBe(
        'completed',
      );
      // Answered after every event of the changes before it: the listing read next is up to date.
      await raw.exists('/');
      claimer.touch(0);
      await claimer.listings.refresh([0], true);
      const st = claimer.listings.get(0)!;
      expect(st.entries.map((e) => e.encodedKey)).toEqual(['p|c']);
      expect(st.changes).toBe(st.listedChanges);
      return { other, claimer, raw, hold: delayed.hold };
    }

    for (const entryEvents of [false, true])
      for (const parentHere of [false, true])
        it(`the child is not claimed (${entryEvents ? 'tree watch' : 'children watch'}, the parent completed ${parentHere ? 'here: the check of its tree node read ahead refuses the claim' : 'elsewhere: its tree node read at the claim changed after the listing'})`, async () => {
          const { other, claimer, raw, hold } = await upToDate(entryEvents, parentHere);
          // The re-queue's event reaches the claimer only with the reply of its next request:
          // the claim call decides before it comes.
          hold();
          await other.queue({ name: 'p', type: 't', data: 'again' });
          const got = await claimer.claim([0]);
          expect(got?.key).not.toEqual(['p', 'c']);
          expect(await other.task(['p'])).toMatchObject({
            state: got === null ? 'pending' : 'working',
          });
          expect(await other.task(['p', 'c'])).toMatchObject({ state: 'pending' });
          await Promise.all([raw.close(), other.close()]);
        });
  },
);
