import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longOf } from '../src/convert.js';

describe('zk adapter: conversions', () => {
  it('reads a jute long as the number a BigInt read gives, rounding included', () => {
    const edges = [
      0n,
      1n,
      -1n,
      2n ** 31n,
      -(2n ** 31n),
      2n ** 32n - 1n,
      2n ** 53n - 1n,
      2n ** 53n + 1n,
      -(2n ** 53n) - 3n,
      2n ** 63n - 1n,
      -(2n ** 63n),
    ];
    const buf = Buffer.alloc(8);
    for (const v of edges) {
      buf.writeBigInt64BE(v);
      expect(longOf(buf), String(v)).toBe(Number(v));
    }
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 8, maxLength: 8 }), (bytes) => {
        const b = Buffer.from(bytes);
        expect(longOf(b)).toBe(Number(b.readBigInt64BE(0)));
      }),
      { numRuns: 2000 },
    );
  });
});
