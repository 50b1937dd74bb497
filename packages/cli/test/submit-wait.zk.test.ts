import { type Coordinator, createEngine, type Engine } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { waitForTask } from '../src/commands/submit.js';
import { freshConnect, session, until } from './helpers.js';

const READS = new Set(['get', 'exists', 'children', 'childrenWithStat']);

/** Forwards to `c` and counts its read requests. */
function countingReads(c: Coordinator): { c: Coordinator; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(c, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (typeof prop === 'string' && READS.has(prop)) reads++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { c: proxy, reads: () => reads };
}

/** A world `tw` on a fresh chroot with one pending task `job`. */
async function pendingJob(options: { maxAttempts?: number } = {}): Promise<{
  c: Coordinator;
  engine: Engine;
}> {
  const c = await session(await freshConnect());
  const engine = createEngine(c, { world: 'tw', buckets: 2 });
  await engine.init();
  await engine.queue({ name: 'job', type: 't' }, null, null, options);
  return { c, engine };
}

describe('submit --wait: waitForTask on watches (real ZooKeeper)', () => {
  it('makes no reads while the task is pending, and returns once it completes', async () => {
    const { c, engine } = await pendingJob();
    const counted = countingReads(c);
    const waiting = waitForTask(
      'tw',
      counted.c,
      ['job'],
      Number.POSITIVE_INFINITY,
      new AbortController().signal,
    );
    // World meta + an exists watch on each of the completed and failed records.
    await until(() => counted.reads() >= 3, 'the watches to be armed');
    const armed = counted.reads();
    // A poller (the old 250 ms loop) would read several times in this second; a watcher not
    // at all. This asserts a count, not a speed.
    await new Promise((r) => setTimeout(r, 1000));
    expect(counted.reads()).toBe(armed);
    const claim = await engine.claim({ worker: 'w' });
    expect(await engine.complete(claim!, { exit: 3 })).toEqual({ status: 'completed' });
    expect(await waiting).toMatchObject({ key: ['job'], state: 'completed', result: { exit: 3 } });
  });

  it('returns the failed record of a dead-lettered task', async () => {
    const { engine } = await pendingJob({ maxAttempts: 1 });
    const waiting = waitForTask(
      'tw',
      engine.coordinator,
      ['job'],
      Number.POSITIVE_INFINITY,
      new AbortController().signal,
    );
    const claim = await engine.claim({ worker: 'w' });
    expect((await engine.fail(claim!, new Error('boom'))).status).toBe('failed');
    expect(await waiting).toMatchObject({ state: 'failed', error: { message: 'boom' } });
  });

  it('returns a task that already ended without waiting for a change', async () => {
    const { engine } = await pendingJob();
    const claim = await engine.claim({ worker: 'w' });
    await engine.complete(claim!, 'early');
    const rec = await waitForTask(
      'tw',
      engine.coordinator,
      ['job'],
      Number.POSITIVE_INFINITY,
      new AbortController().signal,
    );
    expect(rec).toMatchObject({ state: 'completed', result: 'early' });
  });

  it('gives up with null at the deadline, and when the signal aborts', async () => {
    const { engine } = await pendingJob();
    const c = engine.coordinator;
    const signal = new AbortController().signal;
    expect(await waitForTask('tw', c, ['job'], Date.now() + 200, signal)).toBeNull();
    const abort = new AbortController();
    const waiting = waitForTask('tw', c, ['job'], Number.POSITIVE_INFINITY, abort.signal);
    abort.abort();
    expect(await waiting).toBeNull();
    expect((await engine.task(['job']))?.state).toBe('pending');
  });
});
