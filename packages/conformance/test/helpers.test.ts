import { ZoottError } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { expectCode, recorder, SUITE_GROUPS } from '../src/index.js';

describe('expectCode', () => {
  it('returns the error when the code is one of those expected', async () => {
    const err = await expectCode(
      Promise.reject(new ZoottError('NO_NODE', undefined, { path: '/x' })),
      ['NODE_EXISTS', 'NO_NODE'],
    );
    expect(err.path).toBe('/x');
  });

  it('fails when the promise resolves', async () => {
    await expect(expectCode(Promise.resolve('fine'), 'NO_NODE')).rejects.toThrow(
      /resolved with "fine"/,
    );
  });

  it('fails on another code and on errors that are not ZoottErrors', async () => {
    await expect(
      expectCode(Promise.reject(new ZoottError('BAD_VERSION')), 'NO_NODE'),
    ).rejects.toThrow(/BAD_VERSION/);
    await expect(expectCode(Promise.reject(new Error('boom')), 'NO_NODE')).rejects.toThrow(
      /expected a ZoottError/,
    );
  });
});

describe('recorder', () => {
  it('resolves with events that already arrived and with later ones', async () => {
    const r = recorder(1_000);
    r.watch({ type: 'created', path: '/a' });
    expect(await r.next()).toEqual({ type: 'created', path: '/a' });
    const second = r.next(2);
    r.watch({ type: 'deleted', path: '/a' });
    expect(await second).toEqual({ type: 'deleted', path: '/a' });
  });

  it('rejects when the event does not come within the deadline', async () => {
    await expect(recorder(5).next()).rejects.toThrow(/no watch event #1 within 5 ms/);
  });
});

it('lists every group once', () => {
  expect(new Set(SUITE_GROUPS).size).toBe(10);
});
