import type { Coordinator, EngineEventType, TreeEvent, TreeListener } from '@zoott/core';
import { ZoottError } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import type { EngineContext } from '../../src/engine/context.js';
import { TreeFeed } from '../../src/engine/event-tree-feed.js';
import { AREA, type Area, entryPrefix, WorldLayout } from '../../src/engine/layout.js';

/**
 * The tree feed against a scripted coordinator: the test decides when each watch says `reset`,
 * when each listing answers and what it says, and which node events arrive in between, so the
 * interleavings a loaded machine produces now and then (a second connection loss while the
 * listings of the first one's resync are out) run the same way every time.
 */
const WORLD = 'feed';

interface Listing {
  path: string;
  resolve: (names: string[]) => void;
  reject: (err: unknown) => void;
}

function scripted() {
  const layout = new WorldLayout(WORLD, 1);
  const listeners = new Map<string, TreeListener>();
  const listings: Listing[] = [];
  const coordinator = {
    watchTree: async (root: string, listener: TreeListener) => {
      listeners.set(root, listener);
      return () => listeners.delete(root);
    },
    children: (path: string) =>
      new Promise<string[]>((resolve, reject) => listings.push({ path, resolve, reject })),
  } as unknown as Coordinator;
  const ctx = { coordinator, layout } as unknown as EngineContext;
  const told: { key: string; types: readonly EngineEventType[] }[] = [];
  const failures: unknown[] = [];
  const feed = new TreeFeed(
    ctx,
    (_b, key, types) => told.push({ key, types }),
    (err) => failures.push(err),
  );
  const bucket = (area: Area) => layout.bucketPath(area, 0);
  return {
    feed,
    told,
    failures,
    /** Every watch hears `reset` (its watch is back on a new connection). */
    resetAll() {
      for (const l of listeners.values()) l({ type: 'reset' });
    },
    /** A node created or deleted in bucket 0 of `area`. */
    node(area: Area, name: string, type: 'created' | 'deleted') {
      const event: TreeEvent = { type, path: `${bucket(area)}/${name}` };
      listeners.get(layout.areaRoot(area))!(event);
    },
    /** Answers the listings out now, each area with the names `by` gives it. */
    answer(by: Partial<Record<Area, string[]>>) {
      for (const l of listings.splice(0)) {
        const area = ([AREA.pending, AREA.working, AREA.completed] as Area[]).find(
          (a) => l.path === bucket(a),
        )!;
        l.resolve(by[area] ?? []);
      }
    },
    /** Fails every listing out now with a connection loss (or `code`). */
    lose(code: 'CONNECTION_LOSS' | 'OPERATION_TIMEOUT' = 'CONNECTION_LOSS') {
      for (const l of listings.splice(0)) l.reject(new ZoottError(code, 'no answer'));
    },
    /** Whether `n` listings are out. */
    out: (n: number) => listings.length === n,
    flush: () => new Promise<void>((r) => setImmediate(r)),
  };
}

/** A scripted feed whose first listing (an empty bucket) is in. */
async function startedOnEmpty() {
  const s = scripted();
  const started = s.feed.start();
  await s.flush();
  s.answer({});
  expect(await started).toBe(true);
  return s;
}

describe('event tree feed: connection losses', () => {
  it('a task whose steps arrive between two losses still tells every step once, in order', async () => {
    const s = await startedOnEmpty();
    // The first loss: `t` is queued and claimed while the stream hears nothing.
    s.feed.connectionTrouble();
    s.resetAll();
    await s.flush();
    expect(s.out(3)).toBe(true);
    // The watches are back and the resync's listings are out: `t`'s completion arrives.
    const entry = `${entryPrefix('q', 0, 't')}0000000001`;
    s.node(AREA.pending, entry, 'deleted');
    s.node(AREA.working, 't', 'deleted');
    s.node(AREA.completed, 't', 'created');
    // The second loss takes the listings with it: nothing anchors those changes.
    s.feed.connectionTrouble();
    s.lose();
    await s.flush();
    await s.flush();
    // Back again: the next resync sees `t` completed, and says what it must have done.
    s.resetAll();
    await s.flush();
    s.answer({ [AREA.completed]: ['t'] });
    await s.flush();
    await s.flush();
    expect(s.failures).toEqual([]);
    expect(s.told.filter((e) => e.key === 't').flatMap((e) => e.types)).toEqual([
      'queued',
      'started',
      'completed',
    ]);
  });

  it('a listing that times out on a connection that stayed up is taken again', async () => {
    const s = await startedOnEmpty();
    s.feed.connectionTrouble();
    s.resetAll();
    await s.flush();
    const entry = `${entryPrefix('q', 0, 't')}0000000001`;
    s.node(AREA.pending, entry, 'created');
    // No connection trouble and so no reset to come: the feed must list again by itself.
    s.lose('OPERATION_TIMEOUT');
    await s.flush();
    await s.flush();
    expect(s.out(3)).toBe(true);
    s.answer({ [AREA.pending]: [entry] });
    await s.flush();
    await s.flush();
    // The bucket is live again: what happens next is told as it happens.
    s.node(AREA.working, 't', 'created');
    expect(s.failures).toEqual([]);
    expect(s.told.filter((e) => e.key === 't').flatMap((e) => e.types)).toEqual([
      'queued',
      'started',
    ]);
  });
});
