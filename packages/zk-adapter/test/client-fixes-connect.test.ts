import { afterAll, describe, expect, it, vi } from 'vitest';
import { connectZk } from '../src/index.js';
import { zkServer } from './helpers.js';
import { removeCopies } from './library-copies.js';

// The adapter, built on a node-zookeeper-client WITHOUT zoott's fixes, as an unbundled build
// or a bundler picking up the registry's copy would give it.
vi.mock('../src/zk-wire/client-lib.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/zk-wire/client-lib.js')>();
  const { unpatchedLibrary } = await import('./library-copies.js');
  return { ...original, lib: unpatchedLibrary() };
});

afterAll(removeCopies);

describe('connecting with an unpatched client library', () => {
  it('is refused before any connection, though a real ZooKeeper answers', async () => {
    await expect(connectZk(zkServer(), { connectTimeoutMs: 10_000 })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      op: 'connect',
      message: expect.stringContaining("lacks zoott's fixes"),
    });
  });
});
