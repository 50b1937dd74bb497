/**
 * `zoott parked`, the operator's side of the results the AMQP bridge could not publish, with
 * the built `zoott` against a real ZooKeeper: parked results made as the bridge makes them
 * (`parkOps` from the bridge's reply directory), listed in a table and in --json, retried
 * back into that directory, dropped; and every wrong combination of its arguments refused.
 */
import { type Coordinator, digestAcl } from '@zoott/core';
import { parkOps, publishResult } from '@zoott/jobs';
import { worldAcl } from '@zoott/jobs/internal';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, freshWorld, json, type RunResult, session } from './helpers.js';

const DIR = '/zoott_~replies/tw/zoott~amqp/tw';

interface Listed {
  world: string;
  parked: { name: string; exchange: string; routingkey: string; reason: string; result: unknown }[];
}

describe('zoott parked', { timeout: 180_000 }, () => {
  let z: (args: string[]) => Promise<RunResult>;
  let connect: string;
  let c: Coordinator;

  beforeAll(async () => {
    assertBuilt();
    const w = await freshWorld(['--buckets', '4']);
    z = w.z;
    connect = w.connect;
  });
  // A session of each test's own (closed when the test ends).
  beforeEach(async () => {
    c = await session(connect);
  });

  /** Parks a result the way the bridge does; its name. */
  const park = async (n: number, exchange = 'results') => {
    const result = { n, stdout: `${n}\n`, 'zoott~amqp': { exchange, routingkey: `rk-${n}` } };
    const path = await publishResult(c, { exchange: 'zoott~amqp', routingkey: 'tw' }, result, {
      world: 'tw',
    });
    const { stat } = await c.get(path);
    const ops = await parkOps(c, 'tw', await worldAcl(c, 'tw'), path, stat.version, result, {
      from: DIR,
      exchange,
      routingkey: `rk-${n}`,
      reason: `unroutable: no queue is bound to routing key "rk-${n}"`,
      attempts: 4,
      firstFailedAt: new Date().toISOString(),
    });
    await c.multi(ops);
    return path.slice(path.lastIndexOf('/') + 1);
  };

  it('lists nothing, then each parked result with where it was to go and why', async () => {
    const none = await z(['parked', 'tw']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/world tw: no parked results/);
    expect(json<Listed>(await z(['parked', 'tw', '--json'])).parked).toEqual([]);
    const a = await park(1);
    const b = await park(2, '');
    const table = await z(['parked', 'tw']);
    expect(table.stdout).toMatch(/NAME\s+PARKED\s+EXCHANGE\s+ROUTING KEY\s+TRIES\s+REASON/);
    expect(table.stdout).toMatch(new RegExp(`${a}.*results\\s+rk-1\\s+4\\s+unroutable`));
    expect(table.stdout).toMatch(new RegExp(`${b}.*""\\s+rk-2`));
    expect(table.stdout).toMatch(/world tw: 2 parked result\(s\)/);
    const listed = json<Listed>(await z(['parked', 'tw', '--json']));
    expect(listed.parked.map((p) => [p.name, p.exchange, p.routingkey])).toEqual([
      [a, 'results', 'rk-1'],
      [b, '', 'rk-2'],
    ]);
    expect(listed.parked[0]!.result).toMatchObject({ n: 1 });
    // doctor reports each until it is retried or dropped (never moved by --repair).
    const doctor = await z(['doctor', 'tw', '--json']);
    expect(doctor.code).toBe(7);
    const found = json<{
      findings: { kind: string; path: string; repair: string; detail: string }[];
    }>(doctor).findings.filter((f) => f.kind === 'parked-result');
    // Doctor lists findings by path; a protected create's random marker comes before the
    // sequence, so the two are in either order.
    expect(found.map((f) => [f.path, f.repair]).sort()).toEqual(
      [
        [`/zoott_~parked/tw/${a}`, 'none'],
        [`/zoott_~parked/tw/${b}`, 'none'],
      ].sort(),
    );
    expect(found.find((f) => f.path.endsWith(`/${a}`))?.detail).toMatch(
      new RegExp(
        `exchange "results", routing key "rk-1" \\(unroutable.*zoott parked tw ${a} --retry`,
      ),
    );
  });

  it('refuses what does not make sense, changing nothing', async () => {
    const before = json<Listed>(await z(['parked', 'tw', '--json'])).parked.length;
    for (const args of [
      ['--retry', '--drop', '--all'],
      ['result-0000000001'],
      ['--all'],
      ['--retry'],
      ['result-0000000001', '--all', '--drop'],
    ]) {
      const r = await z(['parked', 'tw', ...args]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
    }
    const missing = await z(['parked', 'tw', 'result-9999999999', '--drop']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toMatch(/not parked in world tw: result-9999999999/);
    const reserved = await z(['parked', 'tw~races']);
    expect(reserved.code).toBe(2);
    expect(json<Listed>(await z(['parked', 'tw', '--json'])).parked).toHaveLength(before);
  });

  it('--all --retry puts every one back into the reply directory; --drop removes one for good', async () => {
    const c1 = await park(3);
    const r = await z(['parked', 'tw', '--all', '--retry', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const retried = json<{ retried: string[] }>(r).retried;
    expect(retried).toContain(c1);
    expect(json<Listed>(await z(['parked', 'tw', '--json'])).parked).toEqual([]);
    const back = await c.children(DIR);
    expect(back).toHaveLength(retried.length);
    const d = await park(4);
    const dropped = await z(['parked', 'tw', d, '--drop']);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout).toBe(`dropped ${d}\n`);
    expect(json<Listed>(await z(['parked', 'tw', '--json'])).parked).toEqual([]);
    const healthy = await z(['doctor', 'tw']);
    expect(healthy.code, healthy.stdout).toBe(0);
  });

  it('names the nodes in the parked area that are not parked results, and never retries or drops them', async () => {
    const root = '/zoott_~parked/tw';
    const kept = await park(5);
    await c.create(`${root}/junk`, Buffer.from('not json'), { acl: await worldAcl(c, 'tw') });
    await c.create(
      `${root}/planted`,
      Buffer.from(
        JSON.stringify({ from: DIR, exchange: '', routingkey: 'x', reason: 'r', result: 1 }),
      ),
      { acl: [digestAcl('someone', 'else', 'cdrwa'), { scheme: 'world', id: 'anyone', perms: 1 }] },
    );
    const table = await z(['parked', 'tw']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/world tw: 1 parked result/);
    expect(table.stderr).toMatch(/\/zoott_~parked\/tw\/junk: not JSON, left alone/);
    expect(table.stderr).toMatch(/\/zoott_~parked\/tw\/planted: not under the world ACL/);
    const listed = json<Listed & { unread: { name: string; why: string }[] }>(
      await z(['parked', 'tw', '--json']),
    );
    expect(listed.parked.map((p) => p.name)).toEqual([kept]);
    expect(listed.unread).toEqual([
      { name: 'junk', path: `${root}/junk`, why: 'not JSON' },
      { name: 'planted', path: `${root}/planted`, why: 'not under the world ACL' },
    ]);
    const named = await z(['parked', 'tw', 'junk', '--drop']);
    expect(named.code).toBe(5);
    expect(named.stderr).toMatch(/not parked in world tw: junk \(not JSON\)/);
    const all = await z(['parked', 'tw', '--all', '--drop', '--json']);
    expect(all.code, all.stderr).toBe(0);
    expect(json<{ dropped: string[] }>(all).dropped).toEqual([kept]);
    expect(all.stderr).toMatch(/junk: not JSON, left alone/);
    expect((await c.children(root)).sort()).toEqual(['junk', 'planted']);
    await c.delete(`${root}/junk`);
    await c.delete(`${root}/planted`);
  });
});
