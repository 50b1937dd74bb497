import type { Coordinator } from '../contract/coordinator.js';
import { codeOf } from '../engine/errors.js';

/** One record the index knows: where, since when, and a zxid its node was created by. */
export interface Indexed {
  dir: string;
  name: string;
  /** When the record was first seen (bootstrap: its creation time), ms. */
  seenAt: number;
  /**
   * A zxid no earlier than the record's creation: its `czxid` when it was stat'ed, else the
   * `pzxid` of the listing that first showed it. A later change of the task (a re-queue) has
   * a higher zxid, which is how a deleter tells a record it indexed from a newer one.
   */
  zxid: number;
}

/**
 * When a record was first seen and a zxid no earlier than its creation. The records one
 * listing found share one stamp: an index of 100,000 kept records is then 100,000 map
 * entries pointing at a few hundred stamps, not 100,000 objects of their own.
 */
interface Stamp {
  readonly seenAt: number;
  readonly zxid: number;
}

interface Dir {
  /** The directory's records, in the order they were indexed. */
  names: Map<string, Stamp>;
  /** The stamp indexed last; `sorted` stays true while every new one sorts after it. */
  last: Stamp | null;
  /** The map's order is oldest first (false only after the clock went back). */
  sorted: boolean;
  dirty: boolean;
  listed: boolean;
}

/** Oldest first: first seen, then zxid. */
const byAge = (a: Stamp, b: Stamp): number => a.seenAt - b.seenAt || a.zxid - b.zxid;

/**
 * Records read at once while bootstrapping a directory (one page at a time per listing lane).
 * The reads are plain reads, which the ZooKeeper adapter sends 32 to a request, so a page is
 * one request; small, because a read brings the record's data too (up to the world's record
 * limit, 900 KB by default: 8 lanes of 32 hold at most about 230 MB for a moment, and records
 * of that size are rare).
 */
const STAT_PAGE = 32;
/** Directories listed at once. */
const LIST_LANES = 8;

/**
 * The children of a set of directories, kept with children watches and re-listed only when
 * a watch fired: a quiet world costs no request. The first listing of a directory reads its
 * children in pages (their real creation times, from their stats); later ones stamp new names with the time
 * they were first seen, so a record costs no read of its own in steady state and its age is
 * known to within one pass.
 *
 * The elected reaper holds this for every kept record of a world (100,000 by default) and
 * re-lists busy directories every pass, so it keeps per record only its name and a shared
 * stamp, keeps each directory oldest first (choosing victims merges the directories instead
 * of copying and sorting every record), and re-lists without building a set of the listing
 * unless a record vanished from it.
 */
export class DirIndex {
  private readonly dirs = new Map<string, Dir>();
  private count = 0;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly now: () => number,
    /** Whether the first listing stats its children (ages); a plain count does not need it. */
    private readonly statOnBootstrap = true,
  ) {}

  /** The directories to follow; others are forgotten. */
  setDirs(paths: readonly string[]): void {
    const want = new Set(paths);
    for (const [path, dir] of this.dirs)
      if (!want.has(path)) {
        this.count -= dir.names.size;
        this.dirs.delete(path);
      }
    for (const path of want)
      if (!this.dirs.has(path))
        this.dirs.set(path, {
          names: new Map(),
          last: null,
          sorted: true,
          dirty: true,
          listed: false,
        });
  }

  /** Forgets everything (leadership lost): the next refresh bootstraps again. */
  reset(): void {
    for (const dir of this.dirs.values()) {
      this.clear(dir);
      dir.dirty = true;
      dir.listed = false;
    }
    this.count = 0;
  }

  get size(): number {
    return this.count;
  }

  /** Re-lists the directories whose watch fired; returns how many were listed. */
  async refresh(): Promise<number> {
    const due = [...this.dirs].filter(([, d]) => d.dirty);
    // A few directories at a time: a first listing stats its children a page at a time, and
    // 64 buckets bootstrapping at once would put tens of thousands of reads in flight.
    let next = 0;
    const lane = async () => {
      while (next < due.length) {
        const [path, dir] = due[next++]!;
        await this.list(path, dir);
      }
    };
    await Promise.all(Array.from({ length: Math.min(LIST_LANES, due.length) }, lane));
    return due.length;
  }

  private clear(dir: Dir): void {
    dir.names.clear();
    dir.last = null;
    dir.sorted = true;
  }

  private async list(path: string, dir: Dir): Promise<void> {
    dir.dirty = false;
    let listed: { children: string[]; stat: { pzxid: number } };
    try {
      listed = await this.coordinator.childrenWithStat(path, {
        watch: () => {
          dir.dirty = true;
        },
      });
    } catch (err) {
      dir.dirty = true;
      if (codeOf(err) === 'NO_NODE') {
        this.count -= dir.names.size;
        this.clear(dir);
        return;
      }
      throw err;
    }
    const fresh: string[] = [];
    let known = 0;
    for (const name of listed.children) {
      if (dir.names.has(name)) known++;
      else fresh.push(name);
    }
    // Listed names are distinct: when every indexed name was listed, none vanished, and
    // the busy case needs no set of the listing.
    if (known < dir.names.size) {
      const present = new Set(listed.children);
      for (const name of dir.names.keys())
        if (!present.has(name)) {
          dir.names.delete(name);
          this.count--;
        }
    }
    const now = this.now();
    if (!dir.listed && this.statOnBootstrap) {
      const found: { name: string; stamp: Stamp }[] = [];
      for (let i = 0; i < fresh.length; i += STAT_PAGE) {
        const page = fresh.slice(i, i + STAT_PAGE);
        // A read, not an `exists`: reads issued in one turn share a request, an exists each
        // costs one (a reaper elected over 100,000 kept records sent 100,000 of them).
        const reads = await Promise.all(
          page.map((n) => this.coordinator.get(`${path}/${n}`).catch(() => null)),
        );
        page.forEach((name, index) => {
          const st = reads[index]?.stat;
          if (st) found.push({ name, stamp: { seenAt: Math.min(now, st.ctime), zxid: st.czxid } });
        });
      }
      found.sort((a, b) => byAge(a.stamp, b.stamp));
      for (const entry of found) this.add(dir, entry.name, entry.stamp);
    } else if (fresh.length > 0) {
      const stamp: Stamp = { seenAt: now, zxid: listed.stat.pzxid };
      for (const name of fresh) this.add(dir, name, stamp);
    }
    dir.listed = true;
  }

  private add(dir: Dir, name: string, stamp: Stamp): void {
    if (dir.names.has(name)) return;
    this.count++;
    if (dir.last !== null && byAge(stamp, dir.last) < 0) dir.sorted = false;
    dir.last = stamp;
    dir.names.set(name, stamp);
  }

  /** Every indexed record (a copy: tests and small indexes). */
  entries(): Indexed[] {
    const out: Indexed[] = [];
    for (const [dir, dirState] of this.dirs)
      for (const [name, stamp] of dirState.names)
        out.push({ dir, name, seenAt: stamp.seenAt, zxid: stamp.zxid });
    return out;
  }

  /**
   * What {@link chooseVictims} picks from {@link entries}, in the same order, without
   * copying the index: the directories are each oldest first, so it merges their heads and
   * touches only the records it returns (plus one head per directory).
   */
  victims(
    now: number,
    limits: { maxAgeMs: number | null; maxCount: number | null },
    budget: number,
  ): Indexed[] {
    const overflow = limits.maxCount === null ? 0 : Math.max(0, this.count - limits.maxCount);
    const cutoff = limits.maxAgeMs === null ? null : now - limits.maxAgeMs;
    const heads: { dir: string; it: Iterator<[string, Stamp]>; head: [string, Stamp] }[] = [];
    for (const [dir, dirState] of this.dirs) {
      const it = dirState.sorted
        ? dirState.names.entries()
        : [...dirState.names].sort((a, b) => byAge(a[1], b[1]))[Symbol.iterator]();
      const first = it.next();
      if (!first.done) heads.push({ dir, it, head: first.value });
    }
    const out: Indexed[] = [];
    while (out.length < budget && heads.length > 0) {
      let best = 0;
      for (let i = 1; i < heads.length; i++)
        if (byAge(heads[i]!.head[1], heads[best]!.head[1]) < 0) best = i;
      const head = heads[best]!;
      const [name, stamp] = head.head;
      if (out.length >= overflow && (cutoff === null || stamp.seenAt > cutoff)) break;
      out.push({ dir: head.dir, name, seenAt: stamp.seenAt, zxid: stamp.zxid });
      const next = head.it.next();
      if (next.done) heads.splice(best, 1);
      else head.head = next.value;
    }
    return out;
  }

  /** The record is gone (deleted) or must be seen again: drops it, and re-lists its directory when `relist`. */
  forget(entry: Indexed, relist = false): void {
    const dir = this.dirs.get(entry.dir);
    if (!dir) return;
    if (dir.names.delete(entry.name)) this.count--;
    if (relist) dir.dirty = true;
  }
}

/**
 * The records a limit lets go, oldest first: every record older than `maxAgeMs`, and the
 * oldest ones beyond `maxCount`; at most `budget`. Order: first seen, then creation zxid.
 */
export function chooseVictims(
  entries: readonly Indexed[],
  now: number,
  limits: { maxAgeMs: number | null; maxCount: number | null },
  budget: number,
): Indexed[] {
  const overflow = limits.maxCount === null ? 0 : Math.max(0, entries.length - limits.maxCount);
  // Most passes of a busy world find nothing due: see that without sorting everything.
  if (overflow === 0) {
    if (limits.maxAgeMs === null) return [];
    const cutoff = now - limits.maxAgeMs;
    if (!entries.some((e) => e.seenAt <= cutoff)) return [];
  }
  const sorted = [...entries].sort((a, b) => a.seenAt - b.seenAt || a.zxid - b.zxid);
  let expired = 0;
  if (limits.maxAgeMs !== null) {
    const cutoff = now - limits.maxAgeMs;
    while (expired < sorted.length && sorted[expired]!.seenAt <= cutoff) expired++;
  }
  return sorted.slice(0, Math.min(budget, Math.max(overflow, expired)));
}
