import { createEngine, type EngineEvent } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, TestClock, worldName } from './helpers.js';

describeOnBackends('engine: events', (backend) => {
  it('reports queued, started, retried, failed, completed and cancelled from watches', async () => {
    const c = await backend().connect();
    const clock = new TestClock();
    const engine = createEngine(c, {
      world: worldName(),
      buckets: 4,
      clock,
      logger: memoryLogger(),
    });
    await engine.init();
    const abort = new AbortController();
    const seen: EngineEvent[] = [];
    const iterator = engine.events({ signal: abort.signal })[Symbol.asyncIterator]();
    // Start the stream (first snapshot) before anything happens.
    const first = iterator.next();
    const collecting = (async () => {
      let r = await first;
      while (!r.done) {
        seen.push(r.value);
        r = await iterator.next();
      }
    })();
    const has = (type: string, name: string) =>
      seen.some((e) => e.type === type && e.key[e.key.length - 1] === name);
    await new Promise((r) => setTimeout(r, 50));
    await engine.queue({ name: 'a', type: 't' }, null, null, {
      maxAttempts: 2,
      backoff: { baseMs: 0, maxMs: 0 },
    });
    await eventually(() => has('queued', 'a'));
    const claim = await engine.claim();
    await eventually(() => has('started', 'a'));
    await engine.fail(claim!, 'once');
    await eventually(() => has('retried', 'a'));
    const again = await engine.claim();
    await engine.fail(again!, 'twice');
    await eventually(() => has('failed', 'a'));
    await engine.retry(['a']);
    await engine.complete((await engine.claim())!, 'ok');
    await eventually(() => has('completed', 'a'));
    await engine.queue({ name: 'gone', type: 't' });
    await eventually(() => has('queued', 'gone'));
    await engine.cancel(['gone']);
    await eventually(() => has('cancelled', 'gone'));
    expect(seen.every((e) => e.world === engine.world)).toBe(true);
    abort.abort();
    await collecting;
    await c.close();
  });
});
