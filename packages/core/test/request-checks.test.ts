import { ZoottError } from '@zoott/core';
import {
  checkData,
  checkFrame,
  checkMulti,
  checkRequestPath,
  checkVersion,
  FRAME_ALLOWANCE_BYTES,
  requestFrameBytes,
} from '@zoott/core/internal';
import { describe, expect, it } from 'vitest';

/** The error `run` throws (failing the test when it throws nothing). */
function thrown(run: () => unknown): ZoottError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ZoottError);
    return err as ZoottError;
  }
  throw new Error('expected a ZoottError, nothing was thrown');
}

const limits = { maxDataBytes: 100, chroot: '' };

describe('the request checks both adapters share', () => {
  it('versions: undefined is any (-1); anything but an integer >= -1 is named with its field', () => {
    expect(checkVersion(undefined, 'set', '/n')).toBe(-1);
    expect(checkVersion(0, 'set', '/n')).toBe(0);
    for (const bad of [-2, 1.5, Number.NaN, '3']) {
      expect(thrown(() => checkVersion(bad, 'set', '/n'))).toMatchObject({
        code: 'BAD_ARGUMENTS',
        op: 'set',
        path: '/n',
        field: 'version',
      });
    }
    expect(thrown(() => checkVersion('3', 'set', '/n')).message).toContain('got "3"');
  });

  it('data: null and undefined are no data; a non-Uint8Array or more than the limit is refused', () => {
    expect(checkData(undefined, 'create', '/n', 100)).toBeNull();
    expect(checkData(null, 'create', '/n', 100)).toBeNull();
    expect(checkData(new Uint8Array(100), 'create', '/n', 100)).toHaveLength(100);
    expect(thrown(() => checkData('text', 'set', '/n', 100))).toMatchObject({
      code: 'BAD_ARGUMENTS',
      field: 'data',
    });
    expect(thrown(() => checkData(new Uint8Array(101), 'set', '/n', 100))).toMatchObject({
      code: 'DATA_TOO_LARGE',
      message: expect.stringContaining('101 bytes exceed the limit of 100'),
    });
  });

  it('frames are measured with the chroot in front of every path', () => {
    // A path that makes the frame exactly as big as allowed without a chroot.
    const limit = limits.maxDataBytes + FRAME_ALLOWANCE_BYTES;
    const base = requestFrameBytes([{ op: 'read', path: '/' }], false);
    const path = `/${'a'.repeat(limit - base)}`;
    expect(requestFrameBytes([{ op: 'read', path }], false)).toBe(limit);
    expect(() => checkFrame([{ op: 'read', path }], false, limits, 'get', path)).not.toThrow();
    const err = thrown(() =>
      checkFrame([{ op: 'read', path }], false, { ...limits, chroot: '/c' }, 'get', path),
    );
    expect(err).toMatchObject({ code: 'BAD_ARGUMENTS', op: 'get' });
    expect(err.message).toContain(`request of ${limit + 2} bytes`);
    // A path that long is left out of the error: the message already says what is wrong.
    expect(err.path).toBeUndefined();
  });

  it('counts characters as the UTF-8 bytes they are sent as, in reads, writes and multis', () => {
    // 'é' is 2 bytes and '€' 3: frames that fit by characters and not by bytes are refused,
    // and those that fit by bytes pass (the checks skip the exact count only well below).
    const limit = limits.maxDataBytes + FRAME_ALLOWANCE_BYTES;
    const readBase = requestFrameBytes([{ op: 'read', path: '/' }], false);
    for (const ch of ['é', '€']) {
      const bytes = Buffer.byteLength(ch);
      const fits = `/${ch.repeat(Math.floor((limit - readBase) / bytes))}`;
      const over = `/${ch.repeat(Math.floor((limit - readBase) / bytes) + 1)}`;
      expect(() => checkRequestPath(fits, 'get', limits)).not.toThrow();
      expect(thrown(() => checkRequestPath(over, 'get', limits))).toMatchObject({
        code: 'BAD_ARGUMENTS',
        op: 'get',
      });
      // The same in a multi: a delete's record is the path and a version.
      const multiBase = requestFrameBytes([{ op: 'delete', path: '/' }], true);
      const n = Math.floor((limit - multiBase) / bytes);
      expect(() =>
        checkMulti([{ op: 'delete', path: `/${ch.repeat(n)}` }], limits, []),
      ).not.toThrow();
      expect(
        thrown(() => checkMulti([{ op: 'delete', path: `/${ch.repeat(n + 1)}` }], limits, [])),
      ).toMatchObject({ code: 'BAD_ARGUMENTS', op: 'multi' });
    }
    // A larger data limit, where a path's characters alone fit it but its bytes do not.
    const wide = { maxDataBytes: 2000, chroot: '' };
    expect(thrown(() => checkRequestPath(`/${'€'.repeat(1500)}`, 'get', wide))).toMatchObject({
      code: 'BAD_ARGUMENTS',
    });
  });

  it('multi: the data of all ops first, then each op by index, with per-op codes', () => {
    const half = new Uint8Array(60);
    const tooMuch = thrown(() =>
      checkMulti(
        [
          { op: 'create', path: '/a', data: half },
          { op: 'create', path: 'no-slash', data: half },
        ],
        limits,
        [],
      ),
    );
    expect(tooMuch).toMatchObject({ code: 'DATA_TOO_LARGE', op: 'multi' });
    const badPath = thrown(() =>
      checkMulti(
        [
          { op: 'create', path: '/a' },
          { op: 'delete', path: 'no-slash' },
          { op: 'check', path: '/a', version: 0 },
        ],
        limits,
        [],
      ),
    );
    expect(badPath).toMatchObject({
      code: 'INVALID_PATH',
      op: 'multi',
      opIndex: 1,
      opCodes: [null, 'INVALID_PATH', 'RUNTIME_INCONSISTENCY'],
      field: 'path',
    });
    expect(thrown(() => checkMulti('ops', limits, []))).toMatchObject({ code: 'BAD_ARGUMENTS' });
    const ops = [{ op: 'set' as const, path: '/a', data: half, version: 2 }];
    expect(checkMulti(ops, limits, [])).toBe(ops);
  });
});
