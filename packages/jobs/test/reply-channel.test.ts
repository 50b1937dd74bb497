import { type Coordinator, createEngine } from '@zoott/core';
import { MemoryServer } from '@zoott/memory-adapter';
import { freshNamespace, SELF, settled } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { publishResult, startWorkerDaemon, submitJob, waitForResult } from '../src/internal.js';

const WORLD = 'rc';

describe('reply channel on a real ZooKeeper', () => {
  let a: Coordinator;
  let b: Coordinator;

  beforeAll(async () => {
    const ns = await freshNamespace(inject('zkConnect'));
    a = await connectZk(ns);
    b = await connectZk(ns);
    // Reply paths belong to a world: its ACL is the one they must carry.
    const engine = createEngine(a, { world: WORLD });
    await engine.init();
    engine.close();
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('a waiter started before the result gets it', async () => {
    const waiting = waitForResult(b, {
      world: WORLD,
      exchange: 'x',
      routingkey: 'early',
      timeoutMs: 30_000,
    });
    await publishResult(a, { exchange: 'x', routingkey: 'early' }, { n: 1 }, { world: WORLD });
    expect((await waiting).result).toEqual({ n: 1 });
  });

  it('results come oldest first, and each goes to exactly one consumer', async () => {
    for (let n = 1; n <= 4; n++)
      await publishResult(a, { routingkey: 'fifo' }, { n }, { world: WORLD });
    const got = await Promise.all([
      waitForResult<{ n: number }>(a, { world: WORLD, routingkey: 'fifo', timeoutMs: 30_000 }),
      waitForResult<{ n: number }>(b, { world: WORLD, routingkey: 'fifo', timeoutMs: 30_000 }),
      waitForResult<{ n: number }>(a, { world: WORLD, routingkey: 'fifo', timeoutMs: 30_000 }),
      waitForResult<{ n: number }>(b, { world: WORLD, routingkey: 'fifo', timeoutMs: 30_000 }),
    ]);
    expect(got.map((g) => g.result.n).sort()).toEqual([1, 2, 3, 4]);
    const peek = await publishResult(a, { routingkey: 'fifo' }, { n: 5 }, { world: WORLD });
    const read = await waitForResult(a, {
      world: WORLD,
      routingkey: 'fifo',
      consume: false,
      timeoutMs: 1000,
    });
    expect(read.path).toBe(peek);
    expect(await a.exists(peek)).not.toBeNull();
  });

  it('times out with WAIT_TIMEOUT when nothing comes', async () => {
    await expect(
      waitForResult(a, { world: WORLD, routingkey: 'silence', timeoutMs: 200 }),
    ).rejects.toMatchObject({
      code: 'WAIT_TIMEOUT',
    });
  });
});

describe('in-process daemon on the memory adapter', { timeout: 120_000 }, () => {
  it('runs a job and publishes its result (the embedded demo setup)', async () => {
    const server = new MemoryServer();
    const worker = await server.connect();
    const producer = await server.connect();
    const daemon = await startWorkerDaemon({
      coordinator: worker,
      world: 'demo',
      createWorld: true,
      allowExec: ['/bin/echo'],
      runAs: SELF,
      logLevel: 'silent',
    });
    try {
      const { key } = await submitJob(
        producer,
        { executable: '/bin/echo', arguments: ['in memory'], routingkey: 'demo' },
        { world: 'demo' },
      );
      const reply = await waitForResult<{ stdout: string }>(producer, {
        world: 'demo',
        routingkey: 'demo',
        timeoutMs: 30_000,
      });
      expect(reply.result.stdout).toBe('in memory\n');
      expect((await settled(producer, 'demo', key)).state).toBe('completed');
    } finally {
      await daemon.stop();
      await worker.close();
      await producer.close();
    }
  });
});
