import { ZoottError } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../src/options.js';
import { RequestPipeline } from '../src/request-pipeline.js';
import type { ZkSession } from '../src/session.js';

/**
 * The pipeline's retry policies, on a stand-in session that stays connected: a call that may
 * be retried (`retry`) is tried again after a connection loss; one that may not (`once`: a
 * write at an expected version, whose lost reply may hide its own success) fails with the
 * loss, after one attempt. The server-side cases are in outage.test.ts.
 */
function pipelineOn(session: { generation: number; state: string }) {
  const s = Object.assign(session, { waitState: async () => true });
  return new RequestPipeline(
    s as unknown as ZkSession,
    resolveOptions({ retry: { baseDelayMs: 1 } }),
    (err) => err,
  );
}

describe('the retry policy of a call', () => {
  it("'once' fails with a connection loss after one attempt", async () => {
    const pipeline = pipelineOn({ generation: 1, state: 'connected' });
    let attempts = 0;
    const call = pipeline.withRetry('once', async () => {
      attempts++;
      throw new ZoottError('CONNECTION_LOSS', 'lost');
    });
    await expect(call).rejects.toMatchObject({ code: 'CONNECTION_LOSS' });
    expect(attempts).toBe(1);
  });

  it("'retry' tries again after a connection loss, in the same session", async () => {
    const pipeline = pipelineOn({ generation: 1, state: 'connected' });
    let attempts = 0;
    const call = pipeline.withRetry('retry', async (n) => {
      attempts++;
      if (n === 1) throw new ZoottError('CONNECTION_LOSS', 'lost');
      return n;
    });
    await expect(call).resolves.toBe(2);
    expect(attempts).toBe(2);
  });

  it('an error that is not retryable is not retried', async () => {
    const pipeline = pipelineOn({ generation: 1, state: 'connected' });
    let attempts = 0;
    const call = pipeline.withRetry('retry', async () => {
      attempts++;
      throw new ZoottError('BAD_VERSION', 'moved on');
    });
    await expect(call).rejects.toMatchObject({ code: 'BAD_VERSION' });
    expect(attempts).toBe(1);
  });
});
