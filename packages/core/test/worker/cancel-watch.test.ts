import type { Coordinator, EngineClock, Stat, Watcher } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import type { Claim } from '../../src/engine/types.js';
import { CancelWatcher } from '../../src/worker/cancel-watch.js';
import { LazyAbort } from '../../src/worker/task-context.js';

/** A clock moved by hand that knows its sleepers: how many wait, and until when. */
class SleeperClock implements EngineClock {
  t = 1_000;
  sleepers: Array<{ until: number; wake: () => void }> = [];
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const s = {
        until: this.t + ms,
        wake: () => {
          this.sleepers = this.sleepers.filter((x) => x !== s);
          resolve();
        },
      };
      this.sleepers.push(s);
      signal?.addEventListener('abort', () => s.wake(), { once: true });
    });
  }
  random(): number {
    return 0.5;
  }
  /** Moves time on and wakes the sleepers due, then lets their continuations run. */
  async advance(ms: number): Promise<void> {
    this.t += ms;
    for (const s of this.sleepers.filter((x) => x.until <= this.t)) s.wake();
    await settle();
  }
}

const settle = () => new Promise((r) => setTimeout(r, 0));

/** A coordinator whose `exists` answers from `nodes` and keeps the watches set. */
function fakeCoordinator(nodes: Map<string, string>) {
  const asked: string[] = [];
  const watches = new Map<string, Watcher>();
  const c = {
    state: 'connected',
    async exists(path: string, options?: { watch?: Watcher }): Promise<Stat | null> {
      asked.push(path);
      if (options?.watch) watches.set(path, options.watch);
      const owner = nodes.get(path);
      return owner === undefined ? null : ({ ephemeralOwner: owner } as Stat);
    },
  };
  return { c: c as unknown as Coordinator, asked, watches };
}

const claim = (name: string): Claim =>
  ({ key: [name], workingPath: `/w/${name}`, session: 's1' }) as unknown as Claim;

describe('cancel watcher', () => {
  it('sets no watch for a task that ends in time, and leaves no timer behind', async () => {
    const clock = new SleeperClock();
    const { c, asked } = fakeCoordinator(new Map());
    const w = new CancelWatcher(c, clock, 250);
    const handles = ['a', 'b', 'c'].map((n) => w.watch(claim(n), () => {}));
    await settle();
    // One timer for all three, however many tasks run.
    expect(clock.sleepers).toHaveLength(1);
    for (const h of handles) h.end();
    await settle();
    expect(clock.sleepers).toHaveLength(0);
    await clock.advance(1_000);
    expect(asked).toEqual([]);
  });

  it('watches the tasks still running when their time comes, and reports a cancel once', async () => {
    const clock = new SleeperClock();
    const nodes = new Map([
      ['/w/a', 's1'],
      ['/w/b', 's1'],
      ['/w/c', 's1'],
    ]);
    const { c, asked, watches } = fakeCoordinator(nodes);
    const w = new CancelWatcher(c, clock, 250);
    const cancelled: string[] = [];
    const a = w.watch(claim('a'), () => cancelled.push('a'));
    await clock.advance(100);
    const b = w.watch(claim('b'), () => cancelled.push('b'));
    w.watch(claim('c'), () => cancelled.push('c')).end();
    await clock.advance(160);
    // a is due (started 260 ms ago), b is not yet; c ended.
    expect(asked).toEqual(['/w/a']);
    await clock.advance(100);
    expect(asked).toEqual(['/w/a', '/w/b']);
    expect(clock.sleepers).toHaveLength(0);
    // A data change keeps the watch; a deletion is a cancel, reported once.
    watches.get('/w/a')!({ type: 'dataChanged', path: '/w/a' });
    await settle();
    expect(asked).toEqual(['/w/a', '/w/b', '/w/a']);
    watches.get('/w/a')!({ type: 'deleted', path: '/w/a' });
    watches.get('/w/a')!({ type: 'deleted', path: '/w/a' });
    expect(cancelled).toEqual(['a']);
    // The worker's own settle deletes b's node after the handler ended: no cancel.
    b.end();
    watches.get('/w/b')!({ type: 'deleted', path: '/w/b' });
    expect(cancelled).toEqual(['a']);
    a.end();
  });

  it('reports a cancel that landed before the watch was set, or a node another session holds', async () => {
    const clock = new SleeperClock();
    const { c } = fakeCoordinator(new Map([['/w/b', 'someone-else']]));
    const w = new CancelWatcher(c, clock, 250);
    const cancelled: string[] = [];
    w.watch(claim('a'), () => cancelled.push('a'));
    w.watch(claim('b'), () => cancelled.push('b'));
    await clock.advance(250);
    expect(cancelled).toEqual(['a', 'b']);
  });
});

describe('a handler abort made on first use', () => {
  it('hands an abort that came first to the signal made later', () => {
    const early = new LazyAbort();
    early.abort('first');
    early.abort('second');
    expect(early.signal.aborted).toBe(true);
    expect(early.signal.reason).toBe('first');

    const late = new LazyAbort();
    const signal = late.signal;
    expect(signal.aborted).toBe(false);
    late.abort('now');
    expect(signal.aborted).toBe(true);
    expect(late.signal).toBe(signal);
    expect(signal.reason).toBe('now');
  });
});
