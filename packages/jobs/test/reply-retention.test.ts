import {
  createEngine,
  DEFAULT_RETENTION,
  type RetentionSettings,
  updateRetention,
} from '@zoott/core';
import { describeOnBackends, freshNamespace, SELF, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { describe, expect, inject, it } from 'vitest';
import {
  cleanResults,
  publishResult,
  ReplyResultsRetention,
  startWorkerDaemon,
  submitJob,
} from '../src/index.js';

const HOUR = 3_600_000;

function keeping(results: RetentionSettings['results']): RetentionSettings {
  return { ...DEFAULT_RETENTION, results };
}

describeOnBackends('reply results retention', (backend) => {
  it('removes unconsumed results by age and by count, only in directories its world made', async () => {
    const c = await backend().connect();
    for (const world of ['ra', 'rb']) await createEngine(c, { world }).init();
    const post = (world: string, routingkey: string, n: number) =>
      publishResult(c, { routingkey }, { n }, { world });
    for (let i = 0; i < 3; i++) await post('ra', 'mine', i);
    await post('rb', 'theirs', 0);
    // A directory in the world's area that names no world (the AMQP bridge's outbox, whose
    // results wait to be published): left alone.
    await c.create('/zoott_~replies/ra/_default/old');
    await c.create('/zoott_~replies/ra/_default/old/result-', new Uint8Array(), {
      sequential: true,
    });

    let now = Date.now();
    const task = new ReplyResultsRetention(c, 'ra', () => now);
    expect(await task.pass(keeping({ maxAgeMs: HOUR, maxCount: null }), now, 1000)).toBe(0);
    // By count: the oldest goes.
    expect(await task.pass(keeping({ maxAgeMs: HOUR, maxCount: 2 }), now, 1000)).toBe(1);
    expect((await c.children('/zoott_~replies/ra/_default/mine')).length).toBe(2);
    // By age: the rest once an hour has passed.
    now += HOUR + 1;
    expect(await task.pass(keeping({ maxAgeMs: HOUR, maxCount: 2 }), now, 1000)).toBe(2);
    expect(await c.children('/zoott_~replies/ra/_default/mine')).toEqual([]);
    expect((await c.children('/zoott_~replies/rb/_default/theirs')).length).toBe(1);
    expect((await c.children('/zoott_~replies/ra/_default/old')).length).toBe(1);

    // By hand: a dry run counts, a clean removes; another world's results stay.
    await post('ra', 'mine', 9);
    expect(await cleanResults(c, 'ra', { dryRun: true })).toEqual({ matched: 1, removed: 0 });
    expect(await cleanResults(c, 'ra', { olderThanMs: HOUR })).toEqual({ matched: 0, removed: 0 });
    expect(await cleanResults(c, 'ra')).toEqual({ matched: 1, removed: 1 });
    expect((await c.children('/zoott_~replies/rb/_default/theirs')).length).toBe(1);
    await c.close();
  });
});

describe('the daemon reaps its world [zookeeper]', { timeout: 120_000 }, () => {
  it("removes a job's completed record and its unconsumed reply under the world's limits", async () => {
    const ns = await freshNamespace(inject('zkConnect'));
    const [worker, producer] = [await connectZk(ns), await connectZk(ns)];
    const daemon = await startWorkerDaemon({
      coordinator: worker,
      world: 'kept',
      createWorld: true,
      allowExec: ['/bin/echo'],
      runAs: SELF,
      logLevel: 'silent',
    });
    try {
      await updateRetention(producer, 'kept', {
        completed: { maxCount: 0 },
        results: { maxCount: 0 },
      });
      const { key } = await submitJob(
        producer,
        { executable: '/bin/echo', arguments: ['gone soon'], routingkey: 'nobody' },
        { world: 'kept' },
      );
      const dir = '/zoott_~replies/kept/_default/nobody';
      // Published by the job into a directory that names its world, then reaped.
      await until('the reply directory', async () =>
        (await producer.exists(dir)) === null ? undefined : true,
      );
      expect(JSON.parse(new TextDecoder().decode((await producer.get(dir)).data))).toEqual({
        world: 'kept',
      });
      await until('the reaper to remove the reply and the record', async () =>
        (await producer.children(dir)).length === 0 &&
        (await producer.exists(`/zoott_kept/${key.join('/')}`)) === null
          ? true
          : undefined,
      );
      expect(await createEngine(producer, { world: 'kept' }).counts()).toMatchObject({
        completed: 0,
        pending: 0,
      });
    } finally {
      await daemon.stop();
      await worker.close();
      await producer.close();
    }
  });
});
