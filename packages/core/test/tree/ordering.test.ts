import type { Orderable } from '@zoott/core';
import { compareForClaim, hintLocality, leftForPeer, orderForWorker } from '@zoott/core/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const task = (priority: number, seq: number, hints?: Orderable['hints']): Orderable => ({
  priority,
  seq,
  ...(hints ? { hints } : {}),
});

const orderable = fc.record({
  priority: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constant(Number.NaN), fc.double()),
  seq: fc.oneof(fc.nat(50), fc.constant(Number.NaN)),
});

describe('claim order', () => {
  it('puts higher priority first, then lower seq', () => {
    const sorted = [task(0, 5), task(1, 9), task(0, 2), task(1, 3)].sort(compareForClaim);
    expect(sorted).toEqual([task(1, 3), task(1, 9), task(0, 2), task(0, 5)]);
  });

  it('sorts NaN priority last', () => {
    expect([task(Number.NaN, 0), task(-100, 1)].sort(compareForClaim)[0]).toEqual(task(-100, 1));
  });

  it('is a total preorder: reflexive, antisymmetric, transitive, consistent', () => {
    fc.assert(
      fc.property(orderable, orderable, orderable, (a, b, c) => {
        expect(compareForClaim(a, a)).toBe(0);
        expect(Math.sign(compareForClaim(a, b))).toBe(-Math.sign(compareForClaim(b, a)) || 0);
        if (compareForClaim(a, b) <= 0 && compareForClaim(b, c) <= 0)
          expect(compareForClaim(a, c)).toBeLessThanOrEqual(0);
      }),
      { numRuns: 1000 },
    );
  });

  it('orders by priority, then FIFO, for integer inputs', () => {
    const ints = fc.record({ priority: fc.integer({ min: 0, max: 5 }), seq: fc.nat(1000) });
    fc.assert(
      fc.property(fc.array(ints, { maxLength: 40 }), (tasks) => {
        const sorted = orderForWorker(tasks);
        for (let i = 1; i < sorted.length; i++) {
          const prev = sorted[i - 1]!;
          const cur = sorted[i]!;
          expect(prev.priority).toBeGreaterThanOrEqual(cur.priority);
          if (prev.priority === cur.priority) expect(prev.seq).toBeLessThanOrEqual(cur.seq);
        }
      }),
    );
  });
});

describe('orderForWorker', () => {
  it('prefers local tasks only among equal priorities', () => {
    const a = task(1, 1, { server: 'far' });
    const b = task(1, 2, { server: 'here' });
    const c = task(2, 3, { server: 'far' });
    const input = [a, b, c];
    const out = orderForWorker(input, hintLocality({ server: 'here' }));
    expect(out).toEqual([c, b, a]);
    expect(input).toEqual([a, b, c]);
  });

  it('scores server, file and dataset hints', () => {
    const score = hintLocality({
      server: 'h1',
      hasFile: (f) => f === '/data/x',
      hasDataset: (d) => d === 'ds',
    });
    expect(score(task(0, 0))).toBe(0);
    expect(score(task(0, 0, { server: 'h1' }))).toBe(4);
    expect(score(task(0, 0, { filename: '/data/x', dataset: 'ds' }))).toBe(3);
    expect(score(task(0, 0, { server: 'h2', filename: '/data/y' }))).toBe(0);
  });

  it('calls the locality hook once per task and treats NaN as 0', () => {
    let calls = 0;
    const tasks = [task(0, 1), task(0, 2), task(0, 3)];
    const out = orderForWorker(tasks, (t) => {
      calls++;
      return t.seq === 3 ? 1 : Number.NaN;
    });
    expect(calls).toBe(3);
    expect(out.map((t) => t.seq)).toEqual([3, 1, 2]);
  });

  it('is a permutation of its input', () => {
    fc.assert(
      fc.property(fc.array(orderable, { maxLength: 30 }), fc.func(fc.integer()), (tasks, f) => {
        const out = orderForWorker(tasks, f);
        expect(out).toHaveLength(tasks.length);
        expect(new Set(out)).toEqual(new Set(tasks));
      }),
    );
  });
});

describe('leftForPeer', () => {
  const job = (hints: Orderable['hints']) => ({ type: 'job', ...(hints ? { hints } : {}) });
  const fileHolder = { types: ['job'], files: true };

  it('leaves a file to a live peer that keeps files, unless this worker holds it', () => {
    expect(leftForPeer(job({ filename: 'a' }), 0, [fileHolder])).toBe(true);
    expect(leftForPeer(job({ filename: 'a' }), 2, [fileHolder])).toBe(false);
    expect(leftForPeer(job({ filename: 'a' }), 0, [{ types: ['job'] }])).toBe(false);
    expect(leftForPeer(job({ filename: 'a' }), 0, [])).toBe(false);
  });

  it('leaves a dataset only to a peer that lists it', () => {
    const peers = [{ types: ['job'], datasets: ['d1'] }];
    expect(leftForPeer(job({ dataset: 'd1' }), 0, peers)).toBe(true);
    expect(leftForPeer(job({ dataset: 'd2' }), 0, peers)).toBe(false);
    expect(leftForPeer(job({ dataset: 'd1' }), 1, peers)).toBe(false);
  });

  it('ignores peers that do not run the task type', () => {
    expect(leftForPeer(job({ filename: 'a' }), 0, [{ types: ['other'], files: true }])).toBe(false);
    expect(leftForPeer(job({ server: 'b' }), 0, [{ types: ['other'], server: 'b' }])).toBe(false);
  });

  it('ranks a server over a file over a dataset', () => {
    // This worker holds the file (2) and the dataset (1): a peer named by server still wins.
    const hints = { server: 'b', filename: 'a', dataset: 'd' };
    expect(leftForPeer(job(hints), 3, [{ types: ['job'], server: 'b' }])).toBe(true);
    // This worker has the dataset only: a peer that may hold the file is better placed.
    expect(leftForPeer(job({ filename: 'a', dataset: 'd' }), 1, [fileHolder])).toBe(true);
  });

  it('with peers unknown, presumes a hinted server alive and no file or dataset elsewhere', () => {
    expect(leftForPeer(job({ server: 'b' }), 0, undefined)).toBe(true);
    expect(leftForPeer(job({ server: 'b' }), 4, undefined)).toBe(false);
    expect(leftForPeer(job({ filename: 'a', dataset: 'd' }), 0, undefined)).toBe(false);
    expect(leftForPeer(job(undefined), 0, [fileHolder])).toBe(false);
  });
});
