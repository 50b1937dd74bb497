import { type Coordinator, createEngine, type EngineEvent } from '@zoott/core';
import { cleanCompleted } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import {
  engineOnTestClock,
  eventually,
  intercept,
  memoryLogger,
  withoutTreeWatches,
  worldName,
} from './helpers.js';

const BUCKETS = 4;

describeOnBackends('engine: events', (backend) => {
  for (const mode of ['tree watches', 'listings'] as const)
    it(`reports queued, started, retried, failed, completed, cancelled and removed (${mode})`, async () => {
      const connected = await backend().connect();
      const c = mode === 'listings' ? withoutTreeWatches(connected) : connected;
      const { engine } = await engineOnTestClock(c, BUCKETS);
      const abort = new AbortController();
      const seen: EngineEvent[] = [];
      let ready = false;
      const iterator = engine
        .events({ signal: abort.signal, onReady: () => (ready = true) })
        [Symbol.asyncIterator]();
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
      // The stream is live once its watches are set: only then is a task queued from here on
      // an event rather than part of the first listing.
      await eventually(() => ready);
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
      // A completed task whose record goes (retention) is removed, not cancelled.
      await cleanCompleted(await engine.context());
      await eventually(() => has('removed', 'a'));
      expect(has('cancelled', 'a')).toBe(false);
      expect(seen.every((e) => e.world === engine.world)).toBe(true);
      // Each transition once, in order; a failure says why.
      const ofA = seen.filter((e) => e.key[0] === 'a');
      expect(ofA.map((e) => e.type)).toEqual([
        'queued',
        'started',
        'retried',
        'started',
        'failed',
        'retried',
        'started',
        'completed',
        'removed',
      ]);
      expect(ofA[2]?.error).toMatchObject({ code: 'HANDLER_ERROR', message: 'once' });
      expect(ofA[4]?.error).toMatchObject({ code: 'HANDLER_ERROR', message: 'twice' });
      abort.abort();
      await collecting;
      await c.close();
    });

  it('after a dropped connection, nothing is told until every area watch is back', async () => {
    const raw = await backend().connect();
    // The working area's watch comes back last: its reset is held, and what it would report
    // until then is what a watch not yet registered again misses.
    let holding = false;
    let heldReset: (() => void) | null = null;
    let completedSeen = false;
    const c = intercept(
      raw,
      'watchTree',
      (watchTree) => (path, listener) =>
        watchTree!(path, (e) => {
          if (holding && path.startsWith('/zoott_w/')) {
            if (e.type === 'reset') heldReset = () => listener(e);
            return;
          }
          listener(e);
          if (holding && e.type === 'created' && e.path.startsWith('/zoott_c/'))
            completedSeen = true;
        }),
    );
    const { engine } = await engineOnTestClock(c, BUCKETS);
    const producer = createEngine(await backend().connect(), {
      world: engine.world,
      logger: memoryLogger(),
      clock: engine.clock,
    });
    const abort = new AbortController();
    const seen: string[] = [];
    let ready = false;
    const collecting = (async () => {
      for await (const e of engine.events({ signal: abort.signal, onReady: () => (ready = true) }))
        seen.push(e.type);
    })();
    await eventually(() => ready);
    await producer.queue({ name: 't', type: 't' });
    await eventually(() => seen.includes('queued'));
    holding = true;
    await backend().dropConnection(raw);
    await eventually(() => heldReset !== null);
    // Claimed and completed while the working area's watch is not back: its completion is
    // reported by the completed area's watch, and must not be told as a step of its own.
    await producer.complete((await producer.claim())!, 1);
    await eventually(() => completedSeen);
    holding = false;
    heldReset!();
    await eventually(() => seen.includes('completed'));
    expect(seen).toEqual(['queued', 'started', 'completed']);
    abort.abort();
    await collecting;
  });

  it('a re-queue of a completed, then of a pending task reads as queued, never as gone', async () => {
    const c = await backend().connect();
    const { engine } = await engineOnTestClock(c, BUCKETS);
    const abort = new AbortController();
    const seen: string[] = [];
    let ready = false;
    const collecting = (async () => {
      for await (const e of engine.events({ signal: abort.signal, onReady: () => (ready = true) }))
        seen.push(e.type);
    })();
    await eventually(() => ready);
    await engine.queue({ name: 'x', type: 't' });
    await engine.complete((await engine.claim())!, 1);
    await eventually(() => seen.includes('completed'));
    await engine.queue({ name: 'x', type: 't', priority: 1 });
    await eventually(() => seen.length === 4);
    await engine.queue({ name: 'x', type: 't', priority: 2 });
    await eventually(() => seen.length === 5);
    await engine.cancel(['x']);
    await eventually(() => seen.length === 6);
    expect(seen).toEqual(['queued', 'started', 'completed', 'queued', 'queued', 'cancelled']);
    abort.abort();
    await collecting;
  });

  for (const when of ['after its listing was read', 'before its listing is read'] as const)
    it(`reports a change made during the first listing once (${when}), and nothing the listing held`, async () => {
      const c = await backend().connect();
      const engine = createEngine(c, {
        world: worldName(),
        buckets: 1,
        logger: memoryLogger(),
      });
      await engine.init();
      await engine.queue({ name: 'old', type: 't' });
      // `early` is queued while the stream takes its first listing of the pending bucket: after
      // that listing was read (it lacks `early`), or before (it has it, and the change was
      // reported before the listing's reply). Either way it is reported once.
      let hooked = false;
      const proxy = new Proxy(c, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof value !== 'function') return value;
          if (prop !== 'children') return value.bind(target);
          return async (...args: Parameters<Coordinator['children']>) => {
            const first = String(args[0]).startsWith('/zoott_p/') && !hooked;
            if (first) hooked = true;
            if (first && when === 'before its listing is read')
              await engine.queue({ name: 'early', type: 't' });
            const names = await target.children(...args);
            if (first && when === 'after its listing was read')
              await engine.queue({ name: 'early', type: 't' });
            return names;
          };
        },
      });
      const watched = createEngine(proxy, { world: engine.world, logger: memoryLogger() });
      const abort = new AbortController();
      const seen: string[] = [];
      const collecting = (async () => {
        for await (const e of watched.events({ signal: abort.signal }))
          seen.push(`${e.type} ${e.key.join('/')}`);
      })();
      await eventually(() => seen.includes('queued early'));
      // A later change in the same bucket compares with what the stream last listed.
      await engine.queue({ name: 'later', type: 't' });
      await eventually(() => seen.includes('queued later'));
      await engine.cancel(['later']);
      await eventually(() => seen.includes('cancelled later'));
      expect(seen).toEqual(['queued early', 'queued later', 'cancelled later']);
      abort.abort();
      await collecting;
      await c.close();
    });
});
