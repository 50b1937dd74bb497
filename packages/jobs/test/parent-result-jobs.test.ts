import { createEngine } from '@zoott/core';
import type { RegularJobResult } from '@zoott/core/jobs';
import { settled } from '@zoott/testing';
import { describe, expect, it } from 'vitest';
import { daemonOnZookeeper } from './daemon-on-zookeeper.js';

const WORLD = 'chain';

// JSON jobs chained in a tree: a child job asks for its parent's result on stdin.
describe('a JSON job reading its parent result', { timeout: 120_000 }, () => {
  const zk = daemonOnZookeeper({
    world: WORLD,
    nodeId: 'chain-1',
    concurrency: 2,
    allowExec: ['/bin/*'],
  });

  it('gets the parent result JSON on stdin with parentResult: "stdin"', async () => {
    const engine = createEngine(zk.client, { world: WORLD });
    await engine.queue({
      name: 'fetch',
      type: 'zoott.job',
      data: { executable: '/bin/echo', arguments: ['payload-42'] },
    });
    await engine.queue({
      name: 'count',
      type: 'zoott.job',
      data: { executable: '/bin/cat', parentResult: 'stdin' },
      parent: { key: ['fetch'] },
    });
    const parent = (await settled(zk.client, WORLD, ['fetch'])).result as RegularJobResult;
    const child = await settled(zk.client, WORLD, ['fetch', 'count']);
    expect(child.state, JSON.stringify(child.error)).toBe('completed');
    const out = child.result as RegularJobResult;
    expect(out.exit).toBe(0);
    // `cat` echoed what it was given: the parent's whole result, as JSON.
    expect(JSON.parse(out.stdout)).toEqual(parent);
    expect(JSON.parse(out.stdout).stdout).toBe('payload-42\n');
    expect(out.parentResult).toBe('stdin');
  });

  it('a top-level job asking for a parent result gets null', async () => {
    const engine = createEngine(zk.client, { world: WORLD });
    await engine.queue({
      name: 'orphan',
      type: 'zoott.job',
      data: { executable: '/bin/cat', parentResult: 'stdin' },
    });
    const rec = await settled(zk.client, WORLD, ['orphan']);
    expect((rec.result as RegularJobResult).stdout).toBe('null');
  });

  it('refuses parentResult with its own stdin, or any other value, for good', async () => {
    const engine = createEngine(zk.client, { world: WORLD });
    await engine.queue({
      name: 'both',
      type: 'zoott.job',
      data: { executable: '/bin/cat', parentResult: 'stdin', stdin: 'x' },
    });
    await engine.queue({
      name: 'env',
      type: 'zoott.job',
      data: { executable: '/bin/cat', parentResult: 'env' },
    });
    const both = await settled(zk.client, WORLD, ['both']);
    expect(both.state).toBe('failed');
    expect(both.error?.message).toMatch(/parentResult: cannot be combined with stdin/);
    const env = await settled(zk.client, WORLD, ['env']);
    expect(env.error?.message).toMatch(/parentResult: must be "stdin".*got "env"/);
  });
});
