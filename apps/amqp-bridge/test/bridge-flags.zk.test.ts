import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine, digestAcl } from '@zoott/core';
import { worldRoot } from '@zoott/core/internal';
import { connectZk } from '@zoott/zk-adapter';
import { fourLetter } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, until } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/**
 * `--prefetch` by what the broker does with it, read with `rabbitmqctl` as an operator would:
 * the prefetch count of each queue's consumer, and, with every message the bridge reads
 * held unacknowledged (a test pause before queueing), how many the broker handed out. And
 * `--session-timeout` and `--auth-file` by what ZooKeeper holds and allows.
 */
describe('zoott-amqp-bridge flags, seen by the servers', {
  timeout: 180_000,
}, () => {
  let w: TestWorld;

  beforeAll(async () => {
    assertBuilt();
    // Its own broker: rabbitmqctl needs one this test started.
    w = await testWorld(inject('zkConnect'), { own: true });
  });
  afterAll(async () => {
    await w?.close();
  });

  /** `rabbitmqctl <command> <columns>` as rows, by the queue of their first column. */
  const rows = async (command: string, columns: string[]) => {
    const out = await w.broker.rabbitmqctl([command, ...columns, '--formatter', 'json', '-q']);
    const list = JSON.parse(out) as Record<string, unknown>[];
    return list.sort((a, b) => String(a[columns[0]!]).localeCompare(String(b[columns[0]!])));
  };

  it('--prefetch 2: both consumers have prefetch 2, and each queue has 2 messages out and 1 ready', async () => {
    const jobs = [0, 1, 2].map((n) => ({ executable: '/usr/bin/true', n }));
    const races = [0, 1, 2].map((n) => ({
      executable: '/usr/bin/true',
      input: [{ data: 'x' }],
      n,
    }));
    // Queued before the bridge consumes, so the broker hands out at once all its limit allows.
    await w.client.ch.assertQueue('jobs', { durable: true });
    await w.client.ch.assertQueue('races', { durable: true });
    for (const job of jobs) await w.client.post('jobs', job);
    for (const race of races) await w.client.post('races', race);

    const bridge = await w.bridge({ ZOOTT_AMQP_BRIDGE_TEST_PAUSE: 'received' }, [
      '--prefetch',
      '2',
    ]);
    // The first two of each queue reach the bridge and are held there, unacknowledged.
    const held = (kind: string) =>
      bridge
        .output()
        .split('\n')
        .filter((l) => l.includes('"test pause"') && l.includes(`"amqp-${kind}-`)).length;
    await until(async () => (held('job') >= 2 && held('race') >= 2 ? true : undefined));

    expect(await rows('list_consumers', ['queue_name', 'prefetch_count'])).toEqual([
      { queue_name: 'jobs', prefetch_count: 2 },
      { queue_name: 'races', prefetch_count: 2 },
    ]);
    expect(
      await rows('list_queues', ['name', 'messages_ready', 'messages_unacknowledged']),
    ).toEqual([
      { name: 'jobs', messages_ready: 1, messages_unacknowledged: 2 },
      { name: 'races', messages_ready: 1, messages_unacknowledged: 2 },
    ]);
  });

  it('--session-timeout: ZooKeeper holds the bridge session with that timeout', async () => {
    // A timeout nothing else in the tests asks for (the default is 10000): `cons` lists every
    // connection with its negotiated timeout.
    await w.bridge({}, [
      ...['--session-timeout', '6543', '--job-queue', 'st-jobs', '--race-queue', 'st-races'],
    ]);
    const cons = await fourLetter(inject('zkConnect'), 'cons');
    expect(cons).toMatch(/[(,]to=6543[,)]/);
  });

  it('--auth-file: the bridge queues into a world only those credentials may touch', async () => {
    const locked = await connectZk(w.connect, {
      auth: [{ scheme: 'digest', auth: 'keeper:pa:ss' }],
    });
    try {
      await createEngine(locked, { world: 'vault' }).init();
      await locked.setAcl(worldRoot('vault'), [digestAcl('keeper', 'pa:ss', 'cdrwa')]);
      const file = join(w.dataDir, 'bridge-auth');
      writeFileSync(file, '# the bridge identity\nkeeper:pa:ss\n', { mode: 0o600 });
      const bridge = await w.bridge({ ZOOTT_WORLD: 'vault' }, [
        ...['--auth-file', file, '--job-queue', 'vault-jobs', '--race-queue', 'vault-races'],
      ]);
      const job = { executable: '/usr/bin/true', vault: true };
      await w.client.post('vault-jobs', job, { messageId: 'vault-1' });
      // Queued, or refused for want of the credentials (the bridge retries that for ever).
      const line = await bridge.logLine(
        (l) =>
          (l.msg === 'job from AMQP queued' && l.messageId === 'vault-1') ||
          (l.msg === 'cannot queue the job yet' && /NO_AUTH/.test(String(l.err))),
        'the job queued',
      );
      expect(line).toMatchObject({ msg: 'job from AMQP queued', outcome: 'queued' });
      expect(await locked.exists(`${worldRoot('vault')}/${String(line.task)}`)).not.toBeNull();
    } finally {
      await locked.close();
    }
  });
});
