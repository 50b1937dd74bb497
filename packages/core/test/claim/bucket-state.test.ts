import { describe, expect, it } from 'vitest';
import { BucketState, type CachedEntry } from '../../src/claim/bucket-state.js';
import type { EntryRead } from '../../src/claim/entry-read.js';
import { type EntryName, entryPrefix, parseEntryName } from '../../src/engine/layout.js';
import type { EntryData } from '../../src/engine/types.js';

/*
 * One bucket's state on its own, with no coordinator: each group drives one of its methods and
 * checks the invariant that method owns (see the class's comments). The claim path's tests
 * (claimer, hand-off, entry-events...) cover the same methods through a real claimer.
 */

let seq = 0;
/** The name of a new queued entry of `key` (encoded) at `priority`, in creation order. */
function name(key: string, priority = 0, kind: 'q' | 'x' = 'q'): string {
  return `${entryPrefix(kind, priority, key)}${String(++seq).padStart(10, '0')}`;
}
function parsed(entryName: string): EntryName {
  return parseEntryName(entryName)!;
}
function read(czxid = 1, version = 0): EntryRead {
  const data = { name: 'n', type: 't', attempts: 0, maxAttempts: 3, queuedAt: 0 } as EntryData;
  return { version, czxid, data, firstSeen: 0 };
}
/** A bucket listed once, showing `names` (read at `pzxid`). */
function listed(names: readonly string[], pzxid = 10): BucketState {
  const bucket = BucketState.unlisted();
  const changes = bucket.beginRead(0, 1, 100);
  bucket.applyListing(names, pzxid, changes, []);
  return bucket;
}
const keys = (bucket: BucketState) => bucket.entries.map((entry) => entry.encodedKey);
const none = new Set<string>();

describe('BucketState.unlisted', () => {
  it('is stale and never read, so its first use reads it, and an event cannot fill it', () => {
    const bucket = BucketState.unlisted();
    expect(bucket.stale).toBe(true);
    expect(bucket.readNo).toBe(-1);
    expect(bucket.insertFromEvent(parsed(name('a')), true)).toBe(false);
    expect(bucket.entries).toEqual([]);
  });
});

describe('beginRead', () => {
  it('is no longer stale, stamps the read, and counts the changes seen before it', () => {
    const bucket = BucketState.unlisted();
    bucket.changed();
    const before = bucket.beginRead(7, 3, 500);
    expect(before).toBe(1);
    expect(bucket.stale).toBe(false);
    expect([bucket.readNo, bucket.listedIn, bucket.listedAt]).toEqual([7, 3, 500]);
    // A change while the read is out is not in it.
    bucket.changed();
    bucket.applyListing([], 1, before, []);
    expect(bucket.changedSinceListing()).toBe(true);
    bucket.beginRead(8, 3, 600);
    expect(bucket.changedSinceListing()).toBe(true);
    bucket.applyListing([], 1, 2, []);
    expect(bucket.changedSinceListing()).toBe(false);
  });
});

describe('watches', () => {
  it('a firing counts one change and makes the listing stale; it disarms the watch', () => {
    const bucket = listed([]);
    bucket.armWatch();
    expect(bucket.watchArmed).toBe(true);
    bucket.watchFired();
    expect(bucket.watchArmed).toBe(false);
    expect(bucket.stale).toBe(true);
    expect(bucket.changes).toBe(1);
  });

  it('a failed read leaves the listing stale and does not count the watch it sent', () => {
    const bucket = listed([]);
    bucket.armWatch();
    bucket.beginRead(1, 1, 0);
    bucket.readFailed(true);
    expect([bucket.stale, bucket.watchArmed]).toEqual([true, false]);
    // A read sent without a watch leaves one armed before it alone.
    bucket.armWatch();
    bucket.beginRead(2, 1, 0);
    bucket.readFailed(false);
    expect([bucket.stale, bucket.watchArmed]).toEqual([true, true]);
  });
});

describe('applyListing', () => {
  it('holds the parsed entries in claim order: priority first, then queue order', () => {
    const low = name('low', -1);
    const first = name('first');
    const high = name('high', 5);
    const second = name('second');
    const bucket = listed([second, 'foreign-node', low, high, first]);
    expect(keys(bucket)).toEqual(['high', 'first', 'second', 'low']);
    expect([...bucket.present].sort()).toEqual(['first', 'high', 'low', 'second']);
    expect(bucket.parsed.has('foreign-node')).toBe(false);
  });

  it('lists the ancestors of listed children, and keeps guard stats only for those', () => {
    const bucket = listed([name('p'), name('p|c'), name('q|r|s')]);
    expect([...bucket.ancestors].sort()).toEqual(['p', 'q', 'q|r']);
    bucket.rememberGuard('p', { version: 1, mzxid: 1 });
    bucket.rememberGuard('q', { version: 1, mzxid: 1 });
    bucket.beginRead(1, 1, 0);
    bucket.applyListing([name('p|d')], 11, 0, []);
    expect([...bucket.guardStats.keys()]).toEqual(['p']);
  });

  it('takes the pzxid of its read', () => {
    const bucket = listed([], 42);
    expect(bucket.pzxid).toBe(42);
  });

  it('keeps cached and bad names only while listed, and drops settled own claims', () => {
    const [kept, dropped, settled, bad] = [name('k'), name('d'), name('s'), name('b')];
    const bucket = listed([kept, dropped, settled, bad]);
    for (const entryName of [kept, dropped, settled]) bucket.entryRead(entryName, read(), 0);
    bucket.entryRead(bad, 'bad', 0);
    bucket.beginRead(1, 1, 0);
    bucket.applyListing([kept, settled, bad], 10, 0, [settled]);
    expect([...bucket.cache.keys()]).toEqual([kept]);
    expect([...bucket.bad]).toEqual([bad]);
    bucket.beginRead(2, 1, 0);
    bucket.applyListing([kept], 10, 0, []);
    expect([...bucket.bad]).toEqual([]);
  });

  it('leaves out a name completed here, until a listing without it; its listed child is due', () => {
    const parent = name('p');
    const child = name('p|c');
    const bucket = listed([parent, child]);
    bucket.completedHere('p', parent);
    // A read sent before the completion still shows the parent.
    bucket.beginRead(1, 1, 0);
    bucket.claimCallStarted();
    expect(bucket.applyListing([parent, child], 10, 0, [])).toBe(true);
    expect(keys(bucket)).toEqual(['p|c']);
    expect(bucket.present.has('p')).toBe(false);
    expect(bucket.childReady).toBe(true);
    expect(bucket.gone.has(parent)).toBe(true);
    bucket.beginRead(2, 1, 0);
    expect(bucket.applyListing([child], 10, 0, [])).toBe(false);
    expect(bucket.gone.size).toBe(0);
  });

  it('ends the events-born view: an entry read after it does not move the pzxid', () => {
    const bucket = listed([], 10);
    const born = name('e');
    bucket.insertFromEvent(parsed(born), true);
    bucket.beginRead(1, 1, 0);
    bucket.applyListing([born], 10, 0, []);
    bucket.entryRead(born, read(50), 0);
    expect(bucket.pzxid).toBe(10);
  });
});

describe('applyListing on a re-read', () => {
  /** A seeded generator (mulberry32): the same sequence on every run. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
      mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
      return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
    };
  }
  const sorted = (values: Iterable<string>) => [...values].sort();

  /** A re-read must leave what a first read of the names it shows (less `gone`) would. */
  function expectFirstReadOf(bucket: BucketState, names: readonly string[]): void {
    const fresh = listed(names.filter((entryName) => !bucket.gone.has(entryName)));
    expect(bucket.entries.map((entry) => entry.name)).toEqual(
      fresh.entries.map((entry) => entry.name),
    );
    expect(sorted(bucket.present)).toEqual(sorted(fresh.present));
    expect(sorted(bucket.ancestors)).toEqual(sorted(fresh.ancestors));
    expect(sorted(bucket.parsed.keys())).toEqual(sorted(fresh.parsed.keys()));
  }

  it('keeps the entries it knew (not parsed again) and the listing array it had', () => {
    const [a, b] = [name('a'), name('b')];
    const bucket = listed([a, b]);
    const [first, list] = [bucket.entries[0], bucket.entries];
    bucket.beginRead(1, 1, 0);
    bucket.applyListing([name('c', 9), b, a], 10, 0, []);
    expect(keys(bucket)).toEqual(['c', 'a', 'b']);
    expect(bucket.entries[1]).toBe(first);
    expect(bucket.entries).toBe(list);
  });

  it('puts an own claim the listing still shows back in its place, once', () => {
    const [a, b, c] = [name('a'), name('b'), name('c')];
    const bucket = listed([a, b, c]);
    bucket.claimedHere(bucket.entries[1]!, bucket.entryRead(b, read(), 0)!);
    expect(keys(bucket)).toEqual(['a', 'c']);
    bucket.beginRead(1, 1, 0);
    bucket.applyListing([c, b, a], 10, 0, []);
    expect(keys(bucket)).toEqual(['a', 'b', 'c']);
    bucket.beginRead(2, 1, 0);
    bucket.applyListing([c, b, a], 10, 0, []);
    expect(keys(bucket)).toEqual(['a', 'b', 'c']);
  });

  it('keeps a key two listed entries share while only one of them goes', () => {
    const [queued, dead] = [name('k'), name('k', 0, 'x')];
    const bucket = listed([queued, dead, name('other')]);
    bucket.beginRead(1, 1, 0);
    bucket.applyListing([dead], 10, 0, []);
    expect(sorted(bucket.present)).toEqual(['k']);
    bucket.beginRead(2, 1, 0);
    bucket.applyListing([], 10, 0, []);
    expect(sorted(bucket.present)).toEqual([]);
  });

  it('drops the ancestors of a child that goes, with nothing new listed', () => {
    const [parent, child] = [name('p'), name('p|c')];
    const bucket = listed([parent, child]);
    bucket.beginRead(1, 1, 0);
    bucket.applyListing([parent], 10, 0, []);
    expect(sorted(bucket.ancestors)).toEqual([]);
    expect(sorted(bucket.present)).toEqual(['p']);
  });

  it('keeps a key an entry reported by an event shares with a listed one that goes', () => {
    const listedOne = name('k');
    const bucket = listed([listedOne]);
    const born = name('k', 0, 'x');
    bucket.insertFromEvent(parsed(born), false);
    bucket.beginRead(1, 1, 0);
    bucket.applyListing([born], 10, 0, []);
    expect(sorted(bucket.present)).toEqual(['k']);
  });

  it('over random queues, removals, own claims and completions and events, matches a first read', () => {
    const pool = ['a', 'a|b', 'a|b|c', 'd', 'd|e', 'f', 'g', 'h'];
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const draw = random(seed);
      const pick = <T>(from: readonly T[]): T => from[Math.floor(draw() * from.length)]!;
      const fresh = () => name(pick(pool), pick([-1, 0, 0, 2]), draw() < 0.1 ? 'x' : 'q');
      const server = new Set<string>();
      for (let count = 0; count < 12; count++) server.add(fresh());
      const bucket = listed([...server]);
      let readNo = 1;
      for (let round = 0; round < 150; round++) {
        for (let count = Math.floor(draw() * 4); count > 0; count--) server.add(fresh());
        for (const entryName of server) if (draw() < 0.1) server.delete(entryName);
        // A listing read now, applied after what follows (an own completion it predates).
        const snapshot = [...server].sort(() => draw() - 0.5);
        if (draw() < 0.5 && bucket.entries.length > 0) {
          const entry = pick(bucket.entries);
          if (entry.kind !== 'x') {
            bucket.claimedHere(entry, bucket.entryRead(entry.name, read(), 0)!);
            if (draw() < 0.6) {
              server.delete(entry.name);
              bucket.completedHere(entry.encodedKey, entry.name);
            }
          }
        }
        if (draw() < 0.3) {
          const born = fresh();
          server.add(born);
          bucket.insertFromEvent(parsed(born), false);
        }
        const names = draw() < 0.5 ? snapshot : [...server].sort(() => draw() - 0.5);
        bucket.beginRead(readNo++, 1, 0);
        bucket.applyListing(names, 10, 0, []);
        expectFirstReadOf(bucket, names);
      }
    }
  });
});

describe('insertFromEvent', () => {
  it('inserts in claim order and counts one change', () => {
    const bucket = listed([name('a'), name('b', -1)]);
    expect(bucket.insertFromEvent(parsed(name('c')), false)).toBe(true);
    expect(bucket.insertFromEvent(parsed(name('top', 3)), false)).toBe(true);
    expect(keys(bucket)).toEqual(['top', 'a', 'c', 'b']);
    expect(bucket.changes).toBe(2);
    expect(bucket.present.has('c')).toBe(true);
  });

  it('adds a child’s ancestors', () => {
    const bucket = listed([name('p')]);
    bucket.insertFromEvent(parsed(name('p|c|d')), false);
    expect([...bucket.ancestors].sort()).toEqual(['p', 'p|c']);
  });

  it('never for a listed name or a name gone here (names are never reused)', () => {
    const shown = name('a');
    const gone = name('g');
    const bucket = listed([shown, gone]);
    bucket.completedHere('g', gone);
    expect(bucket.insertFromEvent(parsed(shown), false)).toBe(false);
    expect(bucket.insertFromEvent(parsed(gone), false)).toBe(false);
    expect(bucket.changes).toBe(0);
  });

  it('never twice for one name, nor for a name completed here while a listing was out', () => {
    const bucket = listed([]);
    const once = name('once');
    expect(bucket.insertFromEvent(parsed(once), false)).toBe(true);
    expect(bucket.insertFromEvent(parsed(once), false)).toBe(false);
    expect(keys(bucket)).toEqual(['once']);
    const done = name('done');
    bucket.listingStarted(new Promise<void>(() => {}));
    bucket.completedHere('done', done);
    expect(bucket.insertFromEvent(parsed(done), false)).toBe(false);
    expect(bucket.present.has('done')).toBe(false);
  });

  it('a continuous event-born entry moves the pzxid to its creation when read, never back', () => {
    const bucket = listed([], 10);
    const born = name('e');
    const late = name('f');
    bucket.insertFromEvent(parsed(born), true);
    bucket.insertFromEvent(parsed(late), false);
    bucket.entryRead(late, read(60), 0);
    expect(bucket.pzxid).toBe(10);
    bucket.entryRead(born, read(50), 0);
    expect(bucket.pzxid).toBe(50);
    bucket.insertFromEvent(parsed(name('old')), true);
    bucket.entryRead(bucket.entries.at(-1)!.name, read(20), 0);
    expect(bucket.pzxid).toBe(50);
  });
});

describe('completedHere', () => {
  it('drops the entry’s data, and says whether a child of it is listed', () => {
    const parent = name('p');
    const bucket = listed([parent, name('p|c'), name('r')]);
    bucket.entryRead(parent, read(), 0);
    expect(bucket.completedHere('p', parent)).toBe(true);
    expect(bucket.cache.has(parent)).toBe(false);
    expect(bucket.childReady).toBe(true);
    expect(bucket.present.has('p')).toBe(false);
    expect(bucket.openEntry(parsed(parent), none, none)).toBeUndefined();
  });

  it('a task without a listed child is no claim due', () => {
    const root = name('r');
    const bucket = listed([root]);
    expect(bucket.completedHere('r', root)).toBe(false);
    expect(bucket.childReady).toBe(false);
    expect(bucket.gone.has(root)).toBe(true);
  });

  it('a name no listing shows is remembered only while a listing is out', () => {
    const unseen = name('u');
    const bucket = listed([]);
    bucket.completedHere('u', unseen);
    expect(bucket.gone.has(unseen)).toBe(false);
    bucket.listingStarted(new Promise<void>(() => {}));
    bucket.completedHere('u', unseen);
    expect(bucket.gone.has(unseen)).toBe(true);
  });
});

describe('entryRead', () => {
  it('gone: no candidate, and the listing is stale', () => {
    const gone = name('g');
    const bucket = listed([gone]);
    expect(bucket.entryRead(gone, 'gone', 0)).toBeNull();
    expect(bucket.stale).toBe(true);
    expect(bucket.openEntry(parsed(gone), none, none)).toBeUndefined();
  });

  it('bad: skipped while listed', () => {
    const bad = name('b');
    const bucket = listed([bad]);
    expect(bucket.entryRead(bad, 'bad', 0)).toBeNull();
    expect(bucket.stale).toBe(false);
    expect(bucket.openEntry(parsed(bad), none, none)).toBeUndefined();
  });

  it('read: cached with its first sight', () => {
    const entryName = name('a');
    const bucket = listed([entryName]);
    const cached = bucket.entryRead(entryName, read(5, 2), 77);
    expect(cached).toMatchObject({ version: 2, czxid: 5, firstSeen: 77 });
    expect(bucket.openEntry(parsed(entryName), none, none)).toBe(cached);
  });
});

describe('claimedHere', () => {
  it('leaves the entries, still blocks its descendants, and is no candidate', () => {
    const parent = name('p');
    const bucket = listed([parent, name('p|c')]);
    const entry = bucket.entries[0]!;
    bucket.claimedHere(entry, bucket.entryRead(parent, read(), 0)!);
    expect(keys(bucket)).toEqual(['p|c']);
    expect(bucket.hasListedAncestor('p|c')).toBe(true);
    expect(bucket.cache.get(parent)?.claimed).toBe(true);
    expect(bucket.openEntry(entry, none, none)).toBeUndefined();
  });
});

describe('refusals', () => {
  it('forgetEntry: a refused claim’s entry is read again', () => {
    const entryName = name('a');
    const bucket = listed([entryName]);
    bucket.entryRead(entryName, read(), 0);
    bucket.forgetEntry(entryName);
    expect(bucket.cache.has(entryName)).toBe(false);
    expect(bucket.stale).toBe(true);
    expect(bucket.openEntry(parsed(entryName), none, none)).toBeNull();
  });

  it('guardRefused: no stat older than the refusal is used again', () => {
    const bucket = listed([name('p|c')]);
    bucket.rememberGuard('p', { version: 3, mzxid: 4 });
    expect(bucket.guardStat('p')).toEqual({ version: 3, mzxid: 4 });
    bucket.guardRefused();
    expect(bucket.guardStat('p')).toBeUndefined();
    expect(bucket.stale).toBe(true);
  });

  it('markStale: read again at the next use', () => {
    const bucket = listed([]);
    bucket.markStale();
    expect(bucket.stale).toBe(true);
  });
});

describe('touch', () => {
  it('re-reads at the next use, and drops own claims’ data only', () => {
    const [mine, other] = [name('m'), name('o')];
    const bucket = listed([mine, other]);
    bucket.claimedHere(bucket.entries[0]!, bucket.entryRead(mine, read(), 0)!);
    bucket.entryRead(other, read(), 0);
    bucket.touch();
    expect(bucket.stale).toBe(true);
    expect(bucket.listedAt).toBe(Number.NEGATIVE_INFINITY);
    expect([...bucket.cache.keys()]).toEqual([other]);
  });

  it('relistAtNextUse keeps the data', () => {
    const entryName = name('a');
    const bucket = listed([entryName]);
    bucket.entryRead(entryName, read(), 0);
    bucket.relistAtNextUse();
    expect([bucket.stale, bucket.listedAt]).toEqual([true, Number.NEGATIVE_INFINITY]);
    expect(bucket.cache.size).toBe(1);
  });
});

describe('the two "a claim is due" flags', () => {
  it('an expected child is due until a read sent after it is in', () => {
    const bucket = listed([]);
    bucket.expectChild();
    expect(bucket.stale).toBe(true);
    expect(bucket.listedAt).toBe(Number.NEGATIVE_INFINITY);
    expect(bucket.unblockDue(none)).toBe(true);
    expect(bucket.unblockDue(none)).toBe(true);
    bucket.readSinceDone();
    expect(bucket.unblockDue(none)).toBe(false);
  });

  it('an own claim that blocked a listed entry, once settled, makes a read due', () => {
    const parent = name('p');
    const bucket = listed([parent, name('p|c')]);
    bucket.claimedHere(bucket.entries[0]!, bucket.entryRead(parent, read(), 0)!);
    expect(bucket.unblockDue(new Set(['p']))).toBe(false);
    expect(bucket.settledClaims(new Set(['p']))).toEqual([]);
    expect(bucket.unblockDue(none)).toBe(true);
    expect(bucket.settledClaims(none)).toEqual([parent]);
    // Due until a read after the settle is in, even once the claim's data is dropped.
    bucket.touch();
    expect(bucket.cache.has(parent)).toBe(false);
    expect(bucket.unblockDue(none)).toBe(true);
    bucket.readSinceDone();
    expect(bucket.unblockDue(none)).toBe(false);
  });

  it('a settled own claim that blocks nobody makes no read due', () => {
    const root = name('r');
    const bucket = listed([root, name('q|c')]);
    bucket.claimedHere(bucket.entries[0]!, bucket.entryRead(root, read(), 0)!);
    expect(bucket.unblockDue(none)).toBe(false);
  });

  it('a ready child is cleared by the next claim call', () => {
    const parent = name('p');
    const bucket = listed([parent, name('p|c')]);
    bucket.completedHere('p', parent);
    expect(bucket.childReady).toBe(true);
    bucket.claimCallStarted();
    expect(bucket.childReady).toBe(false);
  });
});

describe('openEntry and hasListedAncestor', () => {
  it('no candidate: dead, held here, busy elsewhere', () => {
    const dead = name('d', 0, 'x');
    const [held, busy, open] = [name('h'), name('b'), name('o')];
    const bucket = listed([dead, held, busy, open]);
    expect(bucket.openEntry(parsed(dead), none, none)).toBeUndefined();
    expect(bucket.openEntry(parsed(held), new Set(['h']), none)).toBeUndefined();
    expect(bucket.openEntry(parsed(busy), none, new Set(['b']))).toBeUndefined();
    expect(bucket.openEntry(parsed(open), none, none)).toBeNull();
  });

  it('a listed proper ancestor blocks, except the one named', () => {
    const bucket = listed([name('p'), name('p|c'), name('p|c|d')]);
    expect(bucket.hasListedAncestor('p|c|d')).toBe(true);
    expect(bucket.hasListedAncestor('p|c', 'p')).toBe(false);
    expect(bucket.hasListedAncestor('p|c|d', 'p')).toBe(true);
    expect(bucket.hasListedAncestor('p')).toBe(false);
  });
});

describe('reads in flight', () => {
  it('one entry read at a time, known until it ends', () => {
    const bucket = listed([]);
    const pending = new Promise<CachedEntry | null>(() => {});
    expect(bucket.readOrReading('a')).toBe(false);
    bucket.fetchStarted('a', pending);
    expect(bucket.fetching('a')).toBe(pending);
    expect(bucket.readOrReading('a')).toBe(true);
    bucket.fetchEnded('a');
    expect(bucket.fetching('a')).toBeUndefined();
  });

  it('a read-ahead is kept until it settles', async () => {
    const bucket = listed([]);
    let done = () => {};
    bucket.readAheadStarted(
      'a',
      new Promise<void>((resolve) => {
        done = resolve;
      }),
    );
    const ahead = bucket.readingAhead.get('a');
    expect(ahead).toBeDefined();
    done();
    await ahead;
    expect(bucket.readingAhead.size).toBe(0);
  });

  it('one listing at a time: a listing ends only itself', () => {
    const bucket = listed([]);
    const first = new Promise<void>(() => {});
    const second = new Promise<void>(() => {});
    bucket.listingStarted(first);
    bucket.listingStarted(second);
    bucket.listingEnded(first);
    expect(bucket.listing).toBe(second);
    bucket.listingEnded(second);
    expect(bucket.listing).toBeNull();
  });
});
