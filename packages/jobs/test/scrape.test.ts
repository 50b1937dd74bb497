import type { AreaCounts, Engine } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { SCRAPE_WAIT_MS, serveMetrics, WorkerMetrics } from '../src/internal.js';
import { WorldCounts } from '../src/world-counts.js';

const COUNTS: AreaCounts = { pending: 3, working: 1, completed: 7, failed: 0 };

/** An engine whose counts() is answered by the test (the rest is never called here). */
function countingEngine(answer: () => Promise<AreaCounts>): {
  engine: Engine;
  calls: () => number;
} {
  let calls = 0;
  const engine = {
    counts: () => {
      calls++;
      return answer();
    },
  } as unknown as Engine;
  return { engine, calls: () => calls };
}

// The metrics endpoint never waits on ZooKeeper: the outage itself is in health.test.ts, on a
// real server; these pin the two guards one by one.
describe('a scrape answers from what the process knows', () => {
  it('does not wait for a refresh that does not come back', async () => {
    const metrics = new WorkerMetrics();
    let collected = 0;
    const server = await serveMetrics(metrics, 0, '127.0.0.1', {
      refresh: () => new Promise<void>(() => {}),
      collect: () => {
        collected++;
      },
      health: () => ({
        healthy: false,
        state: 'suspended',
        session: 'suspended',
        lastReplyAgeMs: 1,
      }),
    });
    try {
      const t0 = Date.now();
      const res = await fetch(server.url, { signal: AbortSignal.timeout(10 * SCRAPE_WAIT_MS) });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('zoott_worker_serving');
      expect(Date.now() - t0).toBeLessThan(10 * SCRAPE_WAIT_MS);
      expect(collected).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('reads the counts only while connected, one read at a time, and tells their age', async () => {
    const metrics = new WorkerMetrics();
    let release: (c: AreaCounts) => void = () => {};
    const { engine, calls } = countingEngine(
      () =>
        new Promise<AreaCounts>((resolve) => {
          release = resolve;
        }),
    );
    let connected = false;
    let now = 1_000;
    const counts = new WorldCounts(
      engine,
      metrics,
      'w',
      () => connected,
      () => now,
    );
    await counts.refresh();
    expect(calls()).toBe(0);
    connected = true;
    const first = counts.refresh();
    void counts.refresh();
    expect(calls()).toBe(1);
    release(COUNTS);
    await first;
    now += 2_500;
    counts.collect();
    const text = await metrics.registry.metrics();
    expect(text).toContain('zoott_worker_world_tasks{world="w",area="completed"} 7');
    expect(text).toContain('zoott_worker_world_tasks_age_seconds 2.5');
  });
});
