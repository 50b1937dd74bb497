import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, bodyOf, resultInbox, until, YOTHALOT_TIME } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/**
 * A consumer blocked on its reply queue is always answered: a job that will not run (an
 * executable outside the worker's --allow-exec list, one that does not exist, a race past
 * the racer cap) gets an error result, and two identical posts get two results.
 */
describe('zoott-amqp-bridge: a job that will not run still answers', { timeout: 240_000 }, () => {
  let w: TestWorld;

  beforeAll(async () => {
    assertBuilt();
    w = await testWorld(inject('zkConnect'));
    await w.client.ch.assertExchange('results', 'direct', { durable: false });
    await w.bridge();
  });
  afterAll(async () => {
    await w?.close();
  });

  /** A run that never happened: the error says why; no exit, no signal, no process. */
  const expectNeverRan = (r: Record<string, unknown>, error: RegExp) => {
    expect(r.error).toMatch(error);
    expect(r).not.toHaveProperty('exit');
    expect(r).not.toHaveProperty('signal');
    expect(r).toMatchObject({ stdout: '', stderr: '', pid: 0 });
    expect(r.started).toMatch(YOTHALOT_TIME);
    expect(r.finished).toMatch(YOTHALOT_TIME);
  };

  it("an executable outside the worker's --allow-exec list answers with an error result", async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-refused');
    await w.client.post('jobs', {
      executable: '/usr/sbin/nologin',
      exchange: 'results',
      routingkey: 'rk-refused',
      ticket: 'T-1',
    });
    const r = bodyOf(await inbox.next());
    expectNeverRan(r, /\/usr\/sbin\/nologin.*not allowed/);
    expect(r).toMatchObject({
      executable: '/usr/sbin/nologin',
      ticket: 'T-1',
      exchange: 'results',
      routingkey: 'rk-refused',
    });
  });

  it('an executable that never started has no exit: its error says why', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-missing');
    await w.client.post('jobs', {
      executable: '/usr/bin/no-such-tool-zoott',
      exchange: 'results',
      routingkey: 'rk-missing',
    });
    expectNeverRan(bodyOf(await inbox.next()), /no-such-tool-zoott/);
  });

  it('two identical posts without a message id are two jobs with two results', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-twice');
    const job = {
      executable: '/usr/bin/echo',
      arguments: ['same'],
      exchange: 'results',
      routingkey: 'rk-twice',
    };
    await w.client.post('jobs', job);
    expect(bodyOf(await inbox.next()).stdout).toBe('same\n');
    // Posted again once the first is done (its completed record still in the world).
    await w.client.post('jobs', job);
    expect(bodyOf(await inbox.next()).stdout).toBe('same\n');
    // And twice at once.
    await w.client.post('jobs', job);
    await w.client.post('jobs', job);
    expect(bodyOf(await inbox.next()).stdout).toBe('same\n');
    expect(bodyOf(await inbox.next()).stdout).toBe('same\n');
  });

  it('a race over a directory of 12,000 records is refused past the racer cap of 10,000', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-cap');
    const dir = join(w.dataDir, 'many');
    mkdirSync(dir);
    for (let i = 0; i < 12_000; i++) writeFileSync(join(dir, `f${i}`), `record ${i}\n`);
    await w.client.post('races', {
      executable: '/usr/bin/false',
      input: 'many',
      // Past the cap every racer would start; the deadline keeps a failing run short.
      timeoutMs: 5000,
      exchange: 'results',
      routingkey: 'rk-cap',
    });
    const r = bodyOf(await inbox.next());
    expect(r.error).toMatch(/more than the limit of 10000/);
    expect(r).toMatchObject({ winner: null, processes: 0, routingkey: 'rk-cap' });
    // No racer was queued.
    const zk = await connectZk(w.connect);
    try {
      const racers = await until(async () => {
        const all = await createEngine(zk, { world: w.world }).list('pending');
        return all.filter((t) => t.key[0]!.includes('.')).length;
      });
      expect(racers).toBe(0);
    } finally {
      await zk.close();
    }
  });
});
