import type { Coordinator } from '@zoott/core';
import { chooseVictims, DirIndex, type Indexed } from '@zoott/core/internal';
import { MemoryServer } from '@zoott/memory-adapter';
import { describe, expect, it } from 'vitest';

const ROOT = '/idx';
const DIRS = [0, 1, 2, 3].map((i) => `${ROOT}/d${i}`);

/** A small deterministic generator (mulberry32), so a failing seed can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function children(c: Coordinator): Promise<string[]> {
  const out: string[] = [];
  for (const d of DIRS) for (const n of await c.children(d)) out.push(`${d}/${n}`);
  return out.sort();
}

const key = (e: Indexed) => `${e.dir}/${e.name}`;

/**
 * The memory adapter lists children in creation order; ZooKeeper promises no order (its
 * listings come in hash order). Listing newest first makes a listing's order the opposite of
 * the records' ages.
 */
function newestFirst(c: Coordinator): Coordinator {
  return new Proxy(c, {
    get(target, prop, receiver) {
      if (prop !== 'childrenWithStat') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<Coordinator['childrenWithStat']>) => {
        const got = await target.childrenWithStat(...args);
        return { ...got, children: [...got.children].reverse() };
      };
    },
  });
}

/**
 * Random rounds of records created and deleted behind the index's back, the clock moving
 * (sometimes backwards), and re-listings; after each, the index holds exactly what the
 * directories hold, and its merged victims are what sorting every record would pick.
 */
async function scenario(seed: number): Promise<void> {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const c = await new MemoryServer().connect();
  await c.create(ROOT);
  for (const d of DIRS) await c.create(d);
  let now = 1_000_000;
  const index = new DirIndex(newestFirst(c), () => now);
  index.setDirs(DIRS);
  let made = 0;
  const create = async (count: number) => {
    for (let i = 0; i < count; i++) {
      // Names in an order unrelated to creation, so the listing's order is not the age order.
      const name = `r${Math.floor(random() * 1e9).toString(36)}-${made++}`;
      await c.create(`${pick(DIRS)}/${name}`);
    }
  };
  // Records that exist before the first listing: the bootstrap stats them.
  await create(25);
  for (let round = 0; round < 40; round++) {
    await create(Math.floor(random() * 12));
    const present = await children(c);
    // Deleted by someone else (a cancel, `zoott clean`): the next listing drops them.
    for (let i = 0; i < 3 && present.length > 0 && random() < 0.5; i++)
      await c.delete(pick(present)).catch(() => undefined);
    now += random() < 0.15 ? -Math.floor(random() * 500) : Math.floor(random() * 1_000);
    await index.refresh();
    const entries = index.entries();
    expect(entries.map(key).sort()).toEqual(await children(c));
    expect(index.size).toBe(entries.length);
    for (let check = 0; check < 4; check++) {
      const limits = {
        maxAgeMs: random() < 0.3 ? null : Math.floor(random() * 20_000),
        maxCount: random() < 0.3 ? null : Math.floor(random() * entries.length),
      };
      const budget = 1 + Math.floor(random() * 30);
      const at = now + Math.floor(random() * 5_000);
      expect(index.victims(at, limits, budget)).toEqual(chooseVictims(entries, at, limits, budget));
    }
    // The reaper deletes some victims and tells the index.
    const gone = index.victims(now, { maxAgeMs: null, maxCount: 0 }, Math.floor(random() * 4));
    for (const v of gone) {
      await c.delete(key(v));
      index.forget(v);
    }
  }
  await c.close();
}

describe('DirIndex', () => {
  it('holds what its directories hold and picks the victims sorting every record would pick', async () => {
    for (let seed = 1; seed <= 12; seed++) await scenario(seed);
  });

  it('picks oldest first across directories without a copy of the index', async () => {
    const c = await new MemoryServer().connect();
    await c.create(ROOT);
    for (const d of DIRS) await c.create(d);
    let now = 10_000;
    const index = new DirIndex(c, () => now);
    index.setDirs(DIRS);
    await index.refresh();
    // One record per directory and listing, each listing 100 ms after the last.
    for (let step = 0; step < 5; step++) {
      for (const d of DIRS) await c.create(`${d}/s${step}`);
      now += 100;
      await index.refresh();
    }
    const names = (v: Indexed[]) => v.map((e) => `${e.dir.slice(-2)}/${e.name}`);
    expect(names(index.victims(now, { maxAgeMs: null, maxCount: 14 }, 100))).toEqual([
      'd0/s0',
      'd1/s0',
      'd2/s0',
      'd3/s0',
      'd0/s1',
      'd1/s1',
    ]);
    // By age: the first two listings are older than 250 ms; the budget caps the answer.
    expect(names(index.victims(now, { maxAgeMs: 250, maxCount: null }, 5))).toHaveLength(5);
    expect(names(index.victims(now, { maxAgeMs: 250, maxCount: null }, 100))).toHaveLength(8);
    expect(index.victims(now, { maxAgeMs: 10_000, maxCount: 20 }, 100)).toEqual([]);
    await c.close();
  });
});
