import { readFileSync } from 'node:fs';
import { forwarderPaths } from '@zoott/amqp-bridge';
import { connectZk } from '@zoott/zk-adapter';
import type { ConsumeMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, type Program, queueCounts, until } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/** Messages in the soak, and their mix (the rest are good jobs). */
const TOTAL = 2000;

type Kind =
  | 'good'
  | 'race'
  | 'dup'
  | 'poison'
  | 'malformed-answered'
  | 'malformed-dead'
  | 'forbidden';

/** The i-th message: what it is, where it goes, and its body. */
function message(i: number): { kind: Kind; queue: string; body: string; pair?: number } {
  const rk = { exchange: 'soak', routingkey: 'rk-soak' };
  const slot = i % 20;
  if (slot === 0)
    return {
      kind: 'poison',
      queue: 'jobs',
      body: JSON.stringify({ executable: '/usr/bin/true', server: '', ...rk, i }),
    };
  if (slot === 1)
    return {
      kind: 'malformed-answered',
      queue: 'jobs',
      body: JSON.stringify({ executable: 7, ...rk, i }),
    };
  if (slot === 2) return { kind: 'malformed-dead', queue: 'jobs', body: `not JSON ${i}` };
  if (slot === 3)
    return {
      kind: 'forbidden',
      queue: 'jobs',
      body: JSON.stringify({
        executable: '/usr/bin/true',
        exchange: 'elsewhere',
        routingkey: 'rk-soak',
        i,
      }),
    };
  if (slot === 4)
    return {
      kind: 'race',
      queue: 'races',
      body: JSON.stringify({ executable: '/usr/bin/cat', input: [{ data: `r${i}\n` }], ...rk, i }),
    };
  // Pairs of identical posts (no message id): two jobs, two results.
  if (slot === 5 || slot === 6) {
    const pair = Math.floor(i / 20);
    return {
      kind: 'dup',
      queue: 'jobs',
      pair,
      body: JSON.stringify({
        executable: '/usr/bin/echo',
        arguments: [`dup ${pair}`],
        ...rk,
        pair,
      }),
    };
  }
  return {
    kind: 'good',
    queue: 'jobs',
    body: JSON.stringify({ executable: '/usr/bin/echo', arguments: [`job ${i}`], ...rk, i }),
  };
}

/** Resident set of a process, in MiB (from /proc). */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/**
 * 2,000 messages mixing good jobs, races, identical posts, jobs the engine refuses, malformed
 * messages (answerable or not) and jobs naming an exchange outside --reply-exchanges, through
 * two bridges and two workers. At the end every good job has exactly one result, every
 * identical post its own, every bad message its error result or its dead letter; the queues
 * are empty, nothing is unacknowledged, and neither bridge's memory grew without bound.
 */
describe('zoott-amqp-bridge soak: 2,000 mixed messages, two bridges, two workers', {
  timeout: 600_000,
}, () => {
  let w: TestWorld;
  let bridges: Program[];

  beforeAll(async () => {
    assertBuilt();
    w = await testWorld(inject('zkConnect'), { own: true, workers: 2 });
    await w.client.ch.assertExchange('soak', 'direct', { durable: false });
    await w.client.ch.assertExchange('soak-dlx', 'fanout', { durable: false });
    const args = ['--dead-letter-exchange', 'soak-dlx', '--reply-exchanges', 'soak'];
    bridges = [await w.bridge({}, args), await w.bridge({}, args)];
  });
  afterAll(async () => {
    await w?.close();
  });

  it('every message ends as it must; queues empty, nothing unacknowledged, RSS bounded', async () => {
    const ch = w.client.ch;
    const results: ConsumeMessage[] = [];
    const dead: ConsumeMessage[] = [];
    const { queue: rq } = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(rq, 'soak', 'rk-soak');
    await ch.consume(rq, (m) => m && results.push(m), { noAck: true });
    const { queue: dq } = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(dq, 'soak-dlx', '');
    await ch.consume(dq, (m) => m && dead.push(m), { noAck: true });

    const msgs = Array.from({ length: TOTAL }, (_, i) => message(i));
    const rss: number[] = [];
    const sample = setInterval(() => {
      for (const b of bridges) if (b.child.pid) rss.push(rssMiB(b.child.pid));
    }, 250);
    try {
      const pub = await w.client.conn.createConfirmChannel();
      for (const m of msgs) pub.sendToQueue(m.queue, Buffer.from(m.body), { persistent: true });
      await pub.waitForConfirms();
      await pub.close();

      const expectResults = msgs.filter((m) =>
        ['good', 'race', 'dup', 'poison', 'malformed-answered'].includes(m.kind),
      ).length;
      const expectDead = msgs.filter((m) =>
        ['malformed-dead', 'forbidden'].includes(m.kind),
      ).length;
      await until(
        async () =>
          results.length >= expectResults && dead.length >= expectDead ? true : undefined,
        480_000,
      );
      // Nothing more on its way: the bridges' reply directory is empty, and a marker sent down
      // the same route after that arrives after anything routed before it.
      const zk = await connectZk(w.connect);
      try {
        await until(async () =>
          (await zk.children(forwarderPaths(w.world).dir)).length === 0 ? true : undefined,
        );
      } finally {
        await zk.close();
      }
      ch.publish('soak', 'rk-soak', Buffer.from('"marker"'));
      await until(async () =>
        results.some((m) => m.content.toString() === '"marker"') ? true : undefined,
      );
    } finally {
      clearInterval(sample);
    }

    const bodies = results
      .filter((m) => m.content.toString() !== '"marker"')
      .map((m) => JSON.parse(m.content.toString()) as Record<string, unknown>);
    expect(bodies).toHaveLength(
      msgs.filter((m) => ['good', 'race', 'dup', 'poison', 'malformed-answered'].includes(m.kind))
        .length,
    );
    const byI = new Map<number, Record<string, unknown>[]>();
    const byPair = new Map<number, Record<string, unknown>[]>();
    for (const b of bodies) {
      if (typeof b.i === 'number') byI.set(b.i, [...(byI.get(b.i) ?? []), b]);
      if (typeof b.pair === 'number') byPair.set(b.pair, [...(byPair.get(b.pair) ?? []), b]);
    }
    msgs.forEach((m, i) => {
      const got = byI.get(i) ?? [];
      if (m.kind === 'good') {
        expect(got, `job ${i}`).toHaveLength(1);
        expect(got[0]).toMatchObject({ stdout: `job ${i}\n`, exit: 0 });
      } else if (m.kind === 'race') {
        expect(got, `race ${i}`).toHaveLength(1);
        expect((got[0]!.winner as Record<string, unknown>).stdout).toBe(`r${i}\n`);
      } else if (m.kind === 'poison') {
        expect(got, `poison ${i}`).toHaveLength(1);
        expect(got[0]!.error).toMatch(/server/);
        expect(got[0]).not.toHaveProperty('exit');
      } else if (m.kind === 'malformed-answered') {
        expect(got, `malformed ${i}`).toHaveLength(1);
        expect(got[0]!.error).toMatch(/executable/);
      } else if (m.kind !== 'dup') expect(got, `${m.kind} ${i}`).toHaveLength(0);
    });
    for (const pair of new Set(msgs.filter((m) => m.kind === 'dup').map((m) => m.pair!)))
      expect(byPair.get(pair), `identical pair ${pair}`).toHaveLength(2);

    const deadBodies = dead.map((m) => m.content.toString()).sort();
    const expectedDead = msgs
      .filter((m) => m.kind === 'malformed-dead' || m.kind === 'forbidden')
      .map((m) => m.body)
      .sort();
    expect(deadBodies).toEqual(expectedDead);
    for (const m of dead)
      expect(String(m.properties.headers?.['x-zoott-error'])).toMatch(
        /not valid JSON|exchange "elsewhere" is not one of --reply-exchanges/,
      );

    const ctl = (args: string[]) => w.broker.rabbitmqctl(args);
    for (const q of ['jobs', 'races'])
      expect(await queueCounts(ctl, q), q).toEqual({ ready: 0, unacked: 0 });
    // Bounded: two bridges' heaps stay far from what 2,000 messages held in memory would
    // need, and the last samples are not the high-water mark of a steady climb.
    const peak = Math.max(...rss);
    expect(peak).toBeLessThan(256);
    for (const b of bridges) expect(b.child.exitCode).toBeNull();
  });
});
