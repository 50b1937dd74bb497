import { type Coordinator, createEngine } from '@zoott/core';
import { WorkerMembership } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from './helpers.js';

/**
 * `c`, with a hook that runs after each registry listing's reply arrived and before its
 * caller goes on: what a session loss handled while the listing was out looks like.
 */
function afterListing(c: Coordinator, registry: string, hook: () => void): Coordinator {
  return new Proxy(c, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== 'children') return typeof value === 'function' ? value.bind(target) : value;
      return async (path: string, ...rest: unknown[]) => {
        const out = await (value as (...a: unknown[]) => Promise<string[]>).apply(target, [
          path,
          ...rest,
        ]);
        if (path === registry) hook();
        return out;
      };
    },
  });
}

describeOnBackends('engine: worker membership', (backend) => {
  it('a session lost while the registry listing is out ends the rebalance quietly', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 8, logger: memoryLogger() });
    await engine.init();
    const registry = (await engine.context()).layout.registry;
    let membership: WorkerMembership | null = null;
    let lose = false;
    const wrapped = afterListing(c, registry, () => {
      if (lose) membership?.sessionLost();
    });
    const member = new WorkerMembership(
      wrapped,
      createEngine(wrapped, { world, logger: memoryLogger() }),
      { id: 'w1', types: ['t'], startedAt: 1 },
      () => {},
      () => {},
    );
    membership = member;
    await member.register();
    expect(await member.rebalance(() => {})).toHaveLength(8);
    member.dirty = true;
    await c.create(`${registry}/worker-`, new Uint8Array(), { ephemeral: true, sequential: true });
    lose = true;
    // The listing's reply comes back after the session was lost: nothing to recompute for.
    const owned: number[][] = [];
    await expect(member.rebalance((o) => owned.push(o))).resolves.toBeNull();
    expect(owned).toEqual([]);
    expect(member.registryPath).toBeNull();
    expect(member.dirty).toBe(true);
  });
});
