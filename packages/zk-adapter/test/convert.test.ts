import { ZoottError } from '@zoott/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longOf, toZoottError } from '../src/convert.js';

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

describe('zk adapter: server errors', () => {
  it('become ZoottErrors with their code, message and cause, without a captured stack', () => {
    const lib = { code: -101, name: 'NO_NODE', message: 'Exception: NO_NODE[-101]' };
    const limit = Error.stackTraceLimit;
    const err = toZoottError(lib, { op: 'get', path: '/a' });
    expect(err).toBeInstanceOf(ZoottError);
    expect(err).toMatchObject({ code: 'NO_NODE', op: 'get', path: '/a', cause: lib });
    // Only the first line (name and message): no frames of the socket handler.
    expect(err.stack?.trim()).not.toContain('\n');
    expect(err.stack).toContain(err.message);
    expect(Error.stackTraceLimit).toBe(limit);
    // Anything else keeps its stack.
    expect(toZoottError(new Error('bad argument'), { op: 'get' }).stack).toContain('\n');
  });
});
