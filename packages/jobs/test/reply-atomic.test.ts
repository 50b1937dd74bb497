import { randomUUID } from 'node:crypto';
import type { Coordinator, Op, SettleOutcome } from '@zoott/core';
import { encodeJson } from '@zoott/core/internal';
import { freshNamespace } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createJobEngine, JOB_TYPE, replyDir, waitForResult } from '../src/internal.js';

/** Forwards to `c`, remembering every multi's ops and every plain create's path. */
function recording(c: Coordinator): { c: Coordinator; multis: Op[][]; creates: string[] } {
  const multis: Op[][] = [];
  const creates: string[] = [];
  const proxy = new Proxy(c, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (prop === 'multi') multis.push([...(args[0] as Op[])]);
        if (prop === 'create') creates.push(args[0] as string);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { c: proxy, multis, creates };
}

describe('job replies commit with the completion (real ZooKeeper)', { timeout: 60_000 }, () => {
  let client: Coordinator;

  beforeAll(async () => {
    client = await connectZk(await freshNamespace(inject('zkConnect')));
  });

  afterAll(async () => {
    await client?.close();
  });

  /** A job engine on a fresh world with one job claimed; logs and settle outcomes collected. */
  async function claimedJob() {
    const rec = recording(client);
    const warnings: string[] = [];
    const settled: SettleOutcome[] = [];
    const world = `w${randomUUID().slice(0, 8)}`;
    const engine = createJobEngine(rec.c, {
      world,
      buckets: 2,
      logger: { warn: (_f, msg) => warnings.push(msg) },
      onSettled: (_claim, outcome) => {
        settled.push(outcome);
      },
    });
    await engine.init();
    await engine.queue({ name: 'job', type: JOB_TYPE, data: { executable: '/bin/true' } });
    const claim = await engine.claim({ worker: 'w' });
    expect(claim?.type).toBe(JOB_TYPE);
    const completedPath = (await engine.context()).layout.recordPath('c', ['job']);
    return { ...rec, engine, claim: claim!, warnings, settled, completedPath, world };
  }

  it('creates the reply node inside the multi that writes the completed record', async () => {
    const { engine, claim, multis, creates, warnings, settled, completedPath, world } =
      await claimedJob();
    const routingkey = `rk-${randomUUID()}`;
    const result = { exit: 0, stdout: 'hi\n', exchange: 'ex', routingkey };
    const before = multis.length;
    const out = await engine.complete(claim, result);
    expect(out.status).toBe('completed');
    expect(settled).toEqual([out]);
    expect(warnings).toEqual([]);
    const dir = replyDir({ exchange: 'ex', routingkey }, world);
    expect(multis.slice(before).map((ops) => ops.map((o) => `${o.op} ${o.path}`))).toEqual([
      expect.arrayContaining([`create ${completedPath}`, `create ${dir}/result-`]),
    ]);
    // The reply was not written by a separate create (only its directory was).
    expect(creates.filter((p) => p.startsWith(`${dir}/`))).toEqual([]);
    const got = await waitForResult(client, {
      world,
      exchange: 'ex',
      routingkey,
      timeoutMs: 10_000,
    });
    expect(got.result).toEqual(result);
    expect(await engine.task(['job'])).toMatchObject({ state: 'completed', result });
  });

  it('a completion multi that fails on the record leaves no reply', async () => {
    const { engine, claim, completedPath, world } = await claimedJob();
    await client.create(completedPath, encodeJson({ someone: 'else' }));
    const routingkey = `rk-${randomUUID()}`;
    const out = await engine.complete(claim, { exit: 0, routingkey });
    expect(out.status).toBe('dropped');
    // The directory was prepared before the multi; the multi left nothing in it.
    expect(await client.children(replyDir({ routingkey }, world))).toEqual([]);
  });

  it('an oversized reply still completes the task; the reply follows on its own', async () => {
    const { engine, claim, warnings, world } = await claimedJob();
    const routingkey = `rk-${randomUUID()}`;
    // Record and reply each carry this: under the record limit alone, over the request
    // limit together.
    const result = { exit: 0, stdout: 'x'.repeat(600_000), routingkey };
    const out = await engine.complete(claim, result);
    expect(out.status).toBe('completed');
    expect(out.extras).toMatchObject({ applied: false, error: { code: 'DATA_TOO_LARGE' } });
    expect(await engine.task(['job'])).toMatchObject({ state: 'completed', result });
    expect(warnings).toEqual([
      'completing without the extra ops: they made the completion multi fail',
      'result published after the completion, not atomically',
    ]);
    const got = await waitForResult(client, { world, routingkey, timeoutMs: 10_000 });
    expect(got.result).toEqual(result);
  });

  it('a reply address that cannot be a node name costs a warning, not the completion', async () => {
    const { engine, claim, warnings } = await claimedJob();
    const out = await engine.complete(claim, { exit: 0, routingkey: 'a/b' });
    expect(out).toEqual({ status: 'completed' });
    expect(warnings).toEqual(['could not publish the result to the reply channel']);
    expect((await engine.task(['job']))?.state).toBe('completed');
  });
});
