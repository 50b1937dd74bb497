import { type Coordinator, createEngine, type EngineLogger, runWorker } from '@zoott/core';
import { MemoryServer } from '@zoott/memory-adapter';
import { expect, it } from 'vitest';
import { eventually, TestClock } from '../engine/helpers.js';

// After `lost` a worker renews its session until one opens. A try that spent its time
// connecting (an adapter keeps trying for its connect timeout while the server is down) must be
// followed by the next try at once: a pause after it, up to 5 s, is time the server may already
// be back and the worker still idle.
it('a renewal try that took longer than the backoff is followed by the next one at once', async () => {
  const server = new MemoryServer();
  const producer = await server.connect();
  const raw = await server.connect();
  const clock = new TestClock();
  // The worker logs each failed try with the wait before the next one.
  const waits: unknown[] = [];
  const logger: EngineLogger = {
    warn: (fields, msg) => {
      if (msg === 'renewSession failed') waits.push((fields as { retryInMs?: unknown }).retryInMs);
    },
    info: () => {},
  };
  const world = 'pace';
  const engine = createEngine(producer, { world, buckets: 1 });
  await engine.init();
  // The first three tries each spend 10 s of the clock connecting, then fail.
  let tries = 0;
  const worker = new Proxy(raw, {
    get(target, prop) {
      if (prop === 'renewSession')
        return async () => {
          tries++;
          if (tries <= 3) {
            clock.advance(10_000);
            throw new Error('could not connect within 10000 ms');
          }
          await target.renewSession();
        };
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Coordinator;
  const handle = runWorker(worker, { t: () => 'ok' }, { world, clock, pollMs: 20, logger });
  await eventually(() => handle.registryPath !== null);
  if (raw.sessionId === null) throw new Error('no session');
  server.expireSession(raw.sessionId);
  await eventually(() => tries === 4 && raw.state === 'connected');
  // No wait between tries that each took longer than the backoff (100, 200, 400 ms).
  expect(waits).toEqual([0, 0, 0]);
  await engine.queue({ name: 'after', type: 't' });
  await eventually(async () => (await engine.counts()).completed === 1);
  await handle.stop();
});
