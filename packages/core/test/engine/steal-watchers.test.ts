import { bucketOwners, STEAL_WATCHERS, stealWatchers } from '@zoott/core/internal';
import { describe, expect, it } from 'vitest';

/** Registry names as ZooKeeper's sequential nodes make them: they differ in a few digits. */
const registryNames = (first: number, n: number) =>
  Array.from({ length: n }, (_, i) => `worker-${String(first + i).padStart(10, '0')}`);

const BUCKETS = 64;

describe('engine: which idle workers keep a steal watch on a bucket', () => {
  it('is a bounded few per bucket, never the owner, whatever the fleet size', () => {
    for (const n of [2, 3, 4, 16, 64, 256, 1024]) {
      const names = registryNames(7, n);
      const owners = bucketOwners(names, BUCKETS);
      const watchers = stealWatchers(names, owners, () => ['t']);
      // Workers that would own and watch nothing watch one bucket each (next test).
      const spare = Math.max(0, n - BUCKETS * (1 + STEAL_WATCHERS));
      for (let b = 0; b < BUCKETS; b++) {
        expect(watchers[b], `n=${n} bucket ${b}`).not.toContain(owners[b]);
        expect(watchers[b]!.length).toBeGreaterThanOrEqual(Math.min(STEAL_WATCHERS, n - 1));
        expect(watchers[b]!.length).toBeLessThanOrEqual(
          STEAL_WATCHERS + Math.max(4, (3 * spare) / BUCKETS + 4),
        );
      }
    }
  });

  it('gives every worker that owns no bucket one to watch, so an idle one always looks somewhere', () => {
    for (const [n, buckets] of [
      [4, 1],
      [8, 2],
      [256, 64],
      [1024, 64],
    ] as const) {
      const names = registryNames(3, n);
      const owners = bucketOwners(names, buckets);
      const watchers = stealWatchers(names, owners, () => ['t']);
      for (const name of names)
        expect(
          owners.includes(name) || watchers.some((w) => w.includes(name)),
          `n=${n} buckets=${buckets}: ${name} owns and watches nothing`,
        ).toBe(true);
      // Each of them is added once: one bucket watched each, beyond the bounded few.
      const extra = watchers.reduce(
        (sum, w) => sum + Math.max(0, w.length - Math.min(STEAL_WATCHERS, n - 1)),
        0,
      );
      expect(extra).toBeLessThanOrEqual(n - new Set(owners).size);
    }
  });

  it('is computed alike from any order of the registry, and a join moves few watchers', () => {
    const names = registryNames(100, 32);
    const owners = bucketOwners(names, BUCKETS);
    const a = stealWatchers(names, owners, () => ['t']);
    const b = stealWatchers([...names].reverse(), owners, () => ['t']);
    expect(b).toEqual(a);
    const joined = [...names, 'worker-0000000999'];
    const after = stealWatchers(joined, bucketOwners(joined, BUCKETS), () => ['t']);
    let kept = 0;
    for (let k = 0; k < BUCKETS; k++) kept += after[k]!.filter((w) => a[k]!.includes(w)).length;
    // Rendezvous: the new name takes about 2/33 of the places, and the owners move a little.
    expect(kept).toBeGreaterThan(BUCKETS * STEAL_WATCHERS * 0.75);
  });

  it('adds a worker for each task type the owner and the watchers do not run', () => {
    const names = registryNames(1, 16);
    const types = new Map<string, string[]>(names.map((n) => [n, ['t']]));
    // One worker alone runs `only`, another `rare` beside `t`; one's info is unreadable.
    types.set(names[3]!, ['only']);
    types.set(names[9]!, ['t', 'rare']);
    const typesOf = (n: string) => (n === names[12] ? null : (types.get(n) ?? null));
    const owners = bucketOwners(names, BUCKETS);
    const watchers = stealWatchers(names, owners, typesOf);
    for (let b = 0; b < BUCKETS; b++) {
      const seen = new Set([owners[b]!, ...watchers[b]!]);
      for (const t of ['t', 'only', 'rare'])
        expect(
          [...seen].some((n) => typesOf(n)?.includes(t)),
          `bucket ${b}: nobody watching runs ${t}`,
        ).toBe(true);
      expect(watchers[b]!.length).toBeLessThanOrEqual(STEAL_WATCHERS + 2);
    }
  });
});
