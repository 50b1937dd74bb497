import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forwarderPaths } from '@zoott/amqp-bridge';
import { type Coordinator, createEngine } from '@zoott/core';
import { worldRoot } from '@zoott/core/internal';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, kill, type Program, resultInbox } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/**
 * A bridge SIGKILLed at each point between two steps of a guarantee (a test pause holds it
 * there; its `test pause` log line says it arrived). A second bridge then takes over.
 */
describe('zoott-amqp-bridge killed mid-way loses nothing and runs nothing twice', {
  timeout: 120_000,
}, () => {
  let w: TestWorld;
  let zk: Coordinator;
  let scratch: string;

  beforeAll(async () => {
    assertBuilt();
    w = await testWorld(inject('zkConnect'));
    zk = await connectZk(w.connect);
    scratch = mkdtempSync(join(tmpdir(), 'zoott-amqp-crash-'));
    await w.client.ch.assertExchange('results', 'direct', { durable: false });
    // Every bridge a test starts is known, so none outlives its test: a bridge left running
    // by a failed test would take the next test's messages and fail it too.
    const start = w.bridge;
    w.bridge = async (...args) => {
      const p = await start(...args);
      started.push(p);
      return p;
    };
  });
  const started: Program[] = [];
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail')
      for (const p of [...started, ...w.workers])
        console.error(`--- ${p.child.spawnargs.join(' ')}\n${p.output().slice(-4000)}`);
    await Promise.all(started.splice(0).map((p) => kill(p)));
  });
  afterAll(async () => {
    await zk?.close();
    await w?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** A job that appends a line to `file` each time it runs, and prints how many there are. */
  const countingJob = (file: string, routingkey: string) => ({
    executable: '/usr/bin/sh',
    arguments: ['-c', 'echo run >> "$0"; wc -l < "$0"', file],
    exchange: 'results',
    routingkey,
  });
  const runs = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

  it('killed after reading a job and before queueing it: nothing was acknowledged, the next bridge queues and runs it once', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-received');
    const file = join(scratch, 'received');
    const job = countingJob(file, 'rk-received');
    const first = await w.bridge({ ZOOTT_AMQP_BRIDGE_TEST_PAUSE: 'received' });
    await w.client.post('jobs', job);
    const paused = await first.logLine((l) => l.msg === 'test pause', 'the pause before queueing');
    const name = String(paused.what);
    await kill(first);
    // Not queued, and not acknowledged either: an ack sent before the job was durably queued
    // would have lost it here.
    expect(await zk.exists(`${worldRoot(w.world)}/${name}`)).toBeNull();
    const second = await w.bridge();
    const seen = await second.logLine(
      (l) => l.msg === 'job from AMQP queued' && l.task === name,
      'the redelivered message',
    );
    expect(seen.outcome).toBe('queued');
    const result = JSON.parse((await inbox.next()).content.toString()) as { stdout: string };
    expect(result.stdout.trim()).toBe('1');
    expect(runs(file)).toBe(1);
    expect((await w.client.ch.checkQueue('jobs')).messageCount).toBe(0);
    await kill(second);
  });

  it('killed after queueing a job and before the ack: the redelivery finds it queued', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-ack');
    const file = join(scratch, 'ack');
    const job = countingJob(file, 'rk-ack');
    const first = await w.bridge({ ZOOTT_AMQP_BRIDGE_TEST_PAUSE: 'queued' });
    await w.client.post('jobs', job);
    const paused = await first.logLine((l) => l.msg === 'test pause', 'the pause after queueing');
    await kill(first);
    const second = await w.bridge();
    // The message comes back (it was never acknowledged) and finds its intake record.
    const seen = await second.logLine(
      (l) => l.msg === 'job from AMQP queued' && l.task === paused.what,
      'the redelivered message',
    );
    expect(seen.outcome).toBe('duplicate');
    const result = JSON.parse((await inbox.next()).content.toString()) as { stdout: string };
    expect(result.stdout.trim()).toBe('1');
    expect(runs(file)).toBe(1);
    const name = String(paused.what);
    const record = await createEngine(zk, { world: w.world }).task([name]);
    expect(record?.attempts).toBe(1);
    // The redelivered message was acknowledged: the queue is empty.
    expect((await w.client.ch.checkQueue('jobs')).messageCount).toBe(0);
    await kill(second);
  });

  it('two identical posts across a crash between queueing and the ack: the redelivery takes the record its first delivery left, the other post gets a job of its own', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-twins');
    const file = join(scratch, 'twins');
    const job = countingJob(file, 'rk-twins');
    const first = await w.bridge({ ZOOTT_AMQP_BRIDGE_TEST_PAUSE: 'queued' });
    await w.client.post('jobs', job);
    const paused = await first.logLine((l) => l.msg === 'test pause', 'the pause after queueing');
    await kill(first);
    // The same body again, before any bridge saw the redelivery: its intake record (not held
    // by anyone now) matches this post's body too, and must not swallow it.
    await w.client.post('jobs', job);
    const second = await w.bridge();
    // Told apart by task, not by the redelivered flag: the second post can reach the killed
    // bridge's consumer before the broker sees its connection gone, and then comes back
    // redelivered too.
    const adopted = await second.logLine(
      (l) => l.msg === 'job from AMQP queued' && l.task === paused.what,
      'the redelivery',
    );
    expect(adopted).toMatchObject({ redelivered: true, outcome: 'duplicate' });
    const fresh = await second.logLine(
      (l) => l.msg === 'job from AMQP queued' && l.task !== paused.what,
      'the second post',
    );
    expect(fresh.outcome).toBe('queued');
    expect(fresh.task).not.toBe(paused.what);
    const outs = [await inbox.next(), await inbox.next()].map((m) =>
      (JSON.parse(m.content.toString()) as { stdout: string }).stdout.trim(),
    );
    expect(outs.sort()).toEqual(['1', '2']);
    expect(runs(file)).toBe(2);
    expect((await w.client.ch.checkQueue('jobs')).messageCount).toBe(0);
    await kill(second);
  });

  it('killed after removing the intake record and before the ack: the redelivery is queued again (a duplicate, never a loss)', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-settled');
    const file = join(scratch, 'settled');
    const first = await w.bridge({ ZOOTT_AMQP_BRIDGE_TEST_PAUSE: 'settled' });
    await w.client.post('jobs', countingJob(file, 'rk-settled'));
    const paused = await first.logLine((l) => l.msg === 'test pause', 'the pause before the ack');
    await kill(first);
    const second = await w.bridge();
    const again = await second.logLine(
      (l) => l.msg === 'job from AMQP queued' && l.redelivered === true,
      'the redelivery',
    );
    // Nothing recorded the first queueing any more: a new task, so the job runs twice. A
    // record kept until after the ack could instead have swallowed a later post of this body.
    expect(again.outcome).toBe('queued');
    expect(again.task).not.toBe(paused.what);
    const outs = [await inbox.next(), await inbox.next()].map((m) =>
      (JSON.parse(m.content.toString()) as { stdout: string }).stdout.trim(),
    );
    expect(outs.sort()).toEqual(['1', '2']);
    expect((await w.client.ch.checkQueue('jobs')).messageCount).toBe(0);
    await kill(second);
  });

  it('killed after taking a result and before publishing it: the other bridge waits for its claim, then publishes it once', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-claimed');
    const file = join(scratch, 'claimed');
    const first = await w.bridge({ ZOOTT_AMQP_BRIDGE_TEST_PAUSE: 'claimed' });
    await w.client.post('jobs', countingJob(file, 'rk-claimed'));
    const paused = await first.logLine(
      (l) => l.msg === 'test pause',
      'the pause before publishing',
    );
    // A second bridge, running beside the first, leaves a result the first has claimed...
    const second = await w.bridge({ ZOOTT_LOG_LEVEL: 'debug' });
    await second.logLine(
      (l) => l.msg === 'result claimed by another bridge' && l.path === paused.what,
      'the claim seen',
    );
    expect(inbox.pending()).toBe(0);
    // ...until the first dies with its session: its claim goes, and the second publishes.
    await kill(first);
    // Still in ZooKeeper: removed only after a confirm.
    expect(await zk.exists(String(paused.what))).not.toBeNull();
    const msg = await inbox.next();
    expect(msg.properties.messageId).toBe(paused.what);
    expect((JSON.parse(msg.content.toString()) as { stdout: string }).stdout.trim()).toBe('1');
    await second.logLine(
      (l) => l.msg === 'result published to AMQP' && l.path === paused.what,
      'the publication',
    );
    expect(await zk.exists(String(paused.what))).toBeNull();
    expect(inbox.pending()).toBe(0);
    expect(runs(file)).toBe(1);
    await kill(second);
  });

  it('killed after the confirm and before removing the result: published again, same message id', async () => {
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-confirmed');
    const file = join(scratch, 'confirmed');
    const first = await w.bridge({ ZOOTT_AMQP_BRIDGE_TEST_PAUSE: 'published' });
    await w.client.post('jobs', countingJob(file, 'rk-confirmed'));
    const paused = await first.logLine(
      (l) => l.msg === 'test pause',
      'the pause after the confirm',
    );
    const once = await inbox.next();
    await kill(first);
    expect(await zk.exists(String(paused.what))).not.toBeNull();
    const second = await w.bridge();
    // At least once: the broker confirmed it, but nothing recorded that before the kill.
    const again = await inbox.next();
    expect(again.properties.messageId).toBe(once.properties.messageId);
    expect(again.content.toString()).toBe(once.content.toString());
    await second.logLine((l) => l.msg === 'result published to AMQP', 'the publication');
    expect(await zk.exists(String(paused.what))).toBeNull();
    expect(runs(file)).toBe(1);
    const { dir } = forwarderPaths(w.world);
    expect(await zk.children(dir)).toEqual([]);
    await kill(second);
  });
});
