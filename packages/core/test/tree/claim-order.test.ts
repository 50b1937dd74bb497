import { describe, expect, it } from 'vitest';
import {
  byClaimOrder,
  claimableBeforeReads,
  compareForClaim,
  mayOutrank,
  notBelowGone,
  type Orderable,
  refusedFloor,
  rivalOfChild,
  scanEndsAt,
} from '../../src/tree/claim-order.js';

const task = (priority: number, seq: number, hints?: Orderable['hints']): Orderable =>
  hints ? { priority, seq, hints } : { priority, seq };

describe('claim order: the rules', () => {
  it('byClaimOrder agrees with compareForClaim on entry names', () => {
    const entries = [task(0, 3), task(5, 9), task(0, 1), task(-2, 0), task(5, 2)];
    const bySign = (n: number) => Math.sign(n);
    for (const a of entries)
      for (const b of entries)
        expect(bySign(byClaimOrder(a, b))).toBe(bySign(compareForClaim(a, b)));
  });

  it('mayOutrank: a higher priority, or a child of the same one', () => {
    expect(mayOutrank({ priority: 2, encodedKey: 'r' }, 1)).toBe(true);
    expect(mayOutrank({ priority: 1, encodedKey: 'r' }, 1)).toBe(false);
    expect(mayOutrank({ priority: 1, encodedKey: 'p|c' }, 1)).toBe(true);
    expect(mayOutrank({ priority: 0, encodedKey: 'p|c' }, 1)).toBe(false);
  });

  it('claimableBeforeReads: only known work above every unread entry, none when all is read', () => {
    const known = [task(3, 1), task(1, 2)];
    expect(claimableBeforeReads(known, [{ priority: 1 }, { priority: 2 }])).toEqual([task(3, 1)]);
    expect(claimableBeforeReads(known, [{ priority: 3 }])).toEqual([]);
    expect(claimableBeforeReads(known, [])).toEqual([]);
  });

  it('notBelowGone: nothing below an unread entry its read found gone', () => {
    const known = [task(3, 1), task(1, 2), task(2, 3)];
    const unread = [
      { name: 'a', priority: 2, encodedKey: 'a' },
      { name: 'b', priority: 5, encodedKey: 'b' },
    ];
    const gone = { gone: new Set(['a']) };
    const none = { gone: new Set<string>() };
    expect(notBelowGone(known, unread, [gone, none])).toEqual([task(3, 1), task(2, 3)]);
    expect(notBelowGone(known, unread, [none, none])).toBe(known);
  });

  it('refusedFloor: the best refused candidate whose listing went stale', () => {
    const tried = [
      { priority: 4, bucket: 0 },
      { priority: 6, bucket: 1 },
      { priority: 9, bucket: 0 },
    ];
    const stale = new Map([
      [0, { stale: true }],
      [1, { stale: false }],
    ]);
    const listings = { get: (bucket: number) => stale.get(bucket) };
    expect(refusedFloor([null, null, {}], tried, listings)).toBe(4);
    expect(refusedFloor([{}, null, {}], tried, listings)).toBe(Number.NEGATIVE_INFINITY);
  });

  it('scanEndsAt: a scan for work above a floor ends at the floor', () => {
    expect(scanEndsAt(2, 2)).toBe(true);
    expect(scanEndsAt(1, 2)).toBe(true);
    expect(scanEndsAt(3, 2)).toBe(false);
  });

  it('rivalOfChild: where a rival stands against a hand-off child', () => {
    const child = task(1, 10);
    // A lower priority ends the scan, read or not.
    expect(rivalOfChild(task(0, 1), undefined, child, 0)).toBe('rest-behind');
    expect(rivalOfChild(task(0, 1), 9, child, 0)).toBe('rest-behind');
    // Unread: ahead only by a higher priority.
    expect(rivalOfChild(task(2, 99), undefined, child, 0)).toBe('ahead');
    expect(rivalOfChild(task(1, 1), undefined, child, 0)).toBe('behind');
    // Read: priority, then locality, then queue order.
    expect(rivalOfChild(task(2, 99), 0, child, 5)).toBe('ahead');
    expect(rivalOfChild(task(1, 99), 5, child, 0)).toBe('ahead');
    expect(rivalOfChild(task(1, 1), 0, child, 5)).toBe('behind');
    expect(rivalOfChild(task(1, 1), 0, child, 0)).toBe('ahead');
    // Queued after the child, same locality: the rest of its bucket is too, unless hinted
    // (a later hinted entry may score differently).
    expect(rivalOfChild(task(1, 20), 0, child, 0)).toBe('rest-behind');
    expect(rivalOfChild(task(1, 20, { server: 'x' }), 0, child, 0)).toBe('behind');
  });
});
