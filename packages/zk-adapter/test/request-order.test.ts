import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../src/options.js';
import { RequestPipeline } from '../src/request-pipeline.js';
import type { ZkSession } from '../src/session.js';

/**
 * The pipeline's issue order, on a stand-in session whose generation the test moves: calls
 * settle in the order they were issued within a session, and a call of a new session never
 * waits behind one of an older session (which fails with its session, or hangs in a client
 * that is gone). On a real server this is reached only through failures the adapter also
 * guards otherwise (outage.test.ts); the order itself is the pipeline's.
 */
function pipelineOn(session: { generation: number; state: string }) {
  return new RequestPipeline(session as unknown as ZkSession, resolveOptions({}), (err) => err);
}

describe('the issue order of calls', () => {
  it('within a session, a call settles only after the calls issued before it', async () => {
    const session = { generation: 1, state: 'connected' };
    const pipeline = pipelineOn(session);
    let release = () => {};
    const first = pipeline.ordered(
      () =>
        new Promise<string>((resolve) => {
          release = () => resolve('first');
        }),
    );
    const order: string[] = [];
    const second = pipeline.ordered(async () => 'second').then((v) => order.push(v));
    void first.then((v) => order.push(v));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    release();
    await second;
    expect(order).toEqual(['first', 'second']);
  });

  it('a call of a new session does not wait behind a call of the old one', async () => {
    const session = { generation: 1, state: 'connected' };
    const pipeline = pipelineOn(session);
    // Never settles: a request of the old session stuck in a library client that is gone.
    void pipeline.ordered(() => new Promise<never>(() => {}));
    session.generation = 2;
    await expect(pipeline.ordered(async () => 'new session')).resolves.toBe('new session');
  });
});
