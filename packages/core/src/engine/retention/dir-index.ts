import type { Coordinator } from '../../contract/coordinator.js';
import { codeOf } from '../errors.js';

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

interface Dir {
  names: Map<string, Indexed>;
  dirty: boolean;
  listed: boolean;
}

/** Stats read at once while bootstrapping a directory (pipelined, one page at a time). */
const STAT_PAGE = 500;
/** Directories listed at once. */
const LIST_LANES = 8;

/**
 * The children of a set of directories, kept with children watches and re-listed only when
 * a watch fired: a quiet world costs no request. The first listing of a directory stats its
 * children in pages (their real creation times); later ones stamp new names with the time
 * they were first seen, so a record costs no read of its own in steady state and its age is
 * known to within one pass.
 */
export class DirIndex {
  private readonly dirs = new Map<string, Dir>();
  private count = 0;

  constructor(
    private readonly c: Coordinator,
    private readonly now: () => number,
    /** Whether the first listing stats its children (ages); a plain count does not need it. */
    private readonly statOnBootstrap = true,
  ) {}

  /** The directories to follow; others are forgotten. */
  setDirs(paths: readonly string[]): void {
    const want = new Set(paths);
    for (const [p, d] of this.dirs)
      if (!want.has(p)) {
        this.count -= d.names.size;
        this.dirs.delete(p);
      }
    for (const p of want)
      if (!this.dirs.has(p)) this.dirs.set(p, { names: new Map(), dirty: true, listed: false });
  }

  /** Forgets everything (leadership lost): the next refresh bootstraps again. */
  reset(): void {
    for (const d of this.dirs.values()) {
      d.names.clear();
      d.dirty = true;
      d.listed = false;
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
        const [p, d] = due[next++]!;
        await this.list(p, d);
      }
    };
    await Promise.all(Array.from({ length: Math.min(LIST_LANES, due.length) }, lane));
    return due.length;
  }

  private async list(path: string, d: Dir): Promise<void> {
    d.dirty = false;
    let listed: { children: string[]; stat: { pzxid: number } };
    try {
      listed = await this.c.childrenWithStat(path, {
        watch: () => {
          d.dirty = true;
        },
      });
    } catch (err) {
      d.dirty = true;
      if (codeOf(err) === 'NO_NODE') {
        this.count -= d.names.size;
        d.names.clear();
        return;
      }
      throw err;
    }
    const present = new Set(listed.children);
    for (const n of d.names.keys())
      if (!present.has(n)) {
        d.names.delete(n);
        this.count--;
      }
    const fresh = listed.children.filter((n) => !d.names.has(n));
    const now = this.now();
    if (!d.listed && this.statOnBootstrap) {
      for (let i = 0; i < fresh.length; i += STAT_PAGE) {
        const page = fresh.slice(i, i + STAT_PAGE);
        const stats = await Promise.all(
          page.map((n) => this.c.exists(`${path}/${n}`).catch(() => null)),
        );
        page.forEach((name, j) => {
          const st = stats[j];
          if (st) this.add(d, { dir: path, name, seenAt: Math.min(now, st.ctime), zxid: st.czxid });
        });
      }
    } else {
      for (const name of fresh)
        this.add(d, { dir: path, name, seenAt: now, zxid: listed.stat.pzxid });
    }
    d.listed = true;
  }

  private add(d: Dir, e: Indexed): void {
    if (!d.names.has(e.name)) this.count++;
    d.names.set(e.name, e);
  }

  /** Every indexed record. */
  entries(): Indexed[] {
    const out: Indexed[] = [];
    for (const d of this.dirs.values()) for (const e of d.names.values()) out.push(e);
    return out;
  }

  /** The record is gone (deleted) or must be seen again: drops it, and re-lists its directory when `relist`. */
  forget(e: Indexed, relist = false): void {
    const d = this.dirs.get(e.dir);
    if (!d) return;
    if (d.names.delete(e.name)) this.count--;
    if (relist) d.dirty = true;
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
