import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, bodyOf, type Program, resultInbox, until } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/** The zoott command as shipped (`pnpm build` first). */
const ZOOTT_BIN = fileURLToPath(new URL('../../../packages/cli/dist/bin.js', import.meta.url));

interface ParkedRow {
  name: string;
  exchange: string;
  routingkey: string;
  reason: string;
  attempts: number;
}

/**
 * Results that cannot be published (an internal exchange the broker refuses, an exchange that
 * does not exist, a routing key no queue is bound to) are retried each on its own, with
 * backoff, while every other result flows; then parked, where `zoott doctor` shows them and
 * `zoott parked` lists, retries and drops them.
 */
describe('zoott-amqp-bridge: no result blocks the others', { timeout: 240_000 }, () => {
  let w: TestWorld;
  let bridge: Program;

  beforeAll(async () => {
    assertBuilt();
    if (!existsSync(ZOOTT_BIN)) throw new Error(`${ZOOTT_BIN} is missing: run pnpm build first`);
    w = await testWorld(inject('zkConnect'));
    await w.client.ch.assertExchange('results', 'direct', { durable: false });
    bridge = await w.bridge({}, ['--park-after', '4000']);
  });
  afterAll(async () => {
    await w?.close();
  });

  const zoott = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [ZOOTT_BIN, '--connect', w.connect, ...args],
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const parked = async () => {
    const r = await zoott(['parked', w.world, '--json']);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { parked: ParkedRow[] }).parked;
  };

  it('three unpublishable results are retried and parked while ten others arrive; doctor reports them; zoott parked retries and drops them', async () => {
    const flow = await resultInbox(w.client.ch, 'results', 'rk-flow');
    const bad = [
      { exchange: 'amq.rabbitmq.trace', routingkey: 'rk-trace' },
      { exchange: 'no-such-exchange', routingkey: 'rk-gone' },
      { exchange: 'results', routingkey: 'rk-nobody' },
    ];
    for (const address of bad)
      await w.client.post('jobs', { executable: '/usr/bin/echo', arguments: ['bad'], ...address });
    // Each has failed once before the good jobs go in.
    for (const address of bad)
      await bridge.logLine(
        (l) => l.msg === 'result not published; retrying' && l.routingkey === address.routingkey,
        `the first failure of ${address.routingkey}`,
      );
    // Retried, a refused result goes out on a channel of its own: the shared publish channel,
    // which carries the good results' confirms, is not closed again by a known refusal.
    const closes = () =>
      bridge.output().split('the publish channel closed; reopening it').length - 1;
    const closedBefore = closes();
    for (let i = 0; i < 10; i++)
      await w.client.post('jobs', {
        executable: '/usr/bin/echo',
        arguments: [String(i)],
        exchange: 'results',
        routingkey: 'rk-flow',
        i,
      });
    // Results are delivered at least once (a consumer deduplicates on `message-id`): a good
    // result whose confirm went down with a channel a bad one closed is published again, under
    // the same id. Ten distinct results must arrive, each again only as itself.
    const byId = new Map<string, number>();
    while (byId.size < 10) {
      const m = await flow.next();
      const id = String(m.properties.messageId);
      const i = bodyOf(m).i as number;
      if (byId.has(id)) expect(i, `message-id ${id} again`).toBe(byId.get(id));
      else byId.set(id, i);
    }
    const got = [...byId.values()];
    expect(got.sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i));

    const rows = await until(async () => {
      const p = await parked();
      return p.length === 3 ? p : undefined;
    });
    const byKey = new Map(rows.map((r) => [r.routingkey, r]));
    expect(byKey.get('rk-trace')?.reason).toMatch(/ACCESS_REFUSED/);
    expect(byKey.get('rk-gone')?.reason).toMatch(/NOT_FOUND/);
    expect(byKey.get('rk-nobody')?.reason).toMatch(/unroutable/);
    for (const r of rows) expect(r.attempts).toBeGreaterThanOrEqual(2);
    expect(closes(), 'retries closed the shared publish channel').toBe(closedBefore);

    const doctor = await zoott(['doctor', w.world, '--json']);
    expect(doctor.code).toBe(7);
    const findings = (JSON.parse(doctor.stdout) as { findings: { kind: string; path: string }[] })
      .findings;
    expect(
      findings
        .filter((f) => f.kind === 'parked-result')
        .map((f) => f.path)
        .sort(),
    ).toEqual(rows.map((r) => `/zoott_~parked/${w.world}/${r.name}`).sort());
    const human = await zoott(['parked', w.world]);
    expect(human.stdout).toMatch(/rk-nobody/);
    expect(human.stdout).toMatch(/3 parked result/);

    // A queue bound at last: retried, the parked result goes out.
    const late = await resultInbox(w.client.ch, 'results', 'rk-nobody');
    const retried = await zoott([
      'parked',
      w.world,
      byKey.get('rk-nobody')!.name,
      '--retry',
      '--json',
    ]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout)).toMatchObject({ retried: [byKey.get('rk-nobody')!.name] });
    expect(bodyOf(await late.next())).toMatchObject({ stdout: 'bad\n', routingkey: 'rk-nobody' });
    expect((await parked()).map((r) => r.routingkey).sort()).toEqual(['rk-gone', 'rk-trace']);

    const missing = await zoott(['parked', w.world, 'result-9999999999', '--drop']);
    expect(missing.code).toBe(5);
    const dropped = await zoott(['parked', w.world, '--all', '--drop', '--json']);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect((JSON.parse(dropped.stdout) as { dropped: string[] }).dropped).toHaveLength(2);
    expect(await parked()).toEqual([]);
    const healthy = await zoott(['doctor', w.world, '--json']);
    expect(healthy.code, healthy.stdout).toBe(0);
  });
});
