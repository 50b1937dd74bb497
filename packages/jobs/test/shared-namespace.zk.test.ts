/**
 * One namespace (chroot), two worlds: `open` (no credentials) and `locked` (a digest user).
 * Each has its own worker daemon running its scheduler, reply channel, progress and
 * retention at once, and neither may affect the other: nothing one world's processes create
 * is a node the other needs. The locked world is made first, in an empty namespace, and its
 * worker runs its scheduler and publishes a reply before the open world exists: whatever
 * zoott creates for a namespace is made by it, with its credentials. Real ZooKeeper, real
 * job processes.
 */
import { randomUUID } from 'node:crypto';
import {
  type Acl,
  addSchedule,
  type Coordinator,
  createEngine,
  digestAcl,
  updateRetention,
} from '@zoott/core';
import { SHARED_ACL } from '@zoott/core/internal';
import { SELF, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  replyDir,
  startWorkerDaemon,
  submitJob,
  type WorkerDaemon,
  waitForResult,
} from '../src/internal.js';

const AUTH = 'alice:pw-shared';
const LOCKED: Acl[] = [digestAcl('alice', 'pw-shared', 'cdrwa')];

interface World {
  name: string;
  client: Coordinator;
  daemon: WorkerDaemon;
}

describe('an open and a locked world in one namespace [zookeeper]', { timeout: 180_000 }, () => {
  let ns: string;
  const worlds: World[] = [];
  const daemons: WorkerDaemon[] = [];
  const clients: Coordinator[] = [];

  async function start(name: string, locked: boolean): Promise<World> {
    const client = await connectZk(
      ns,
      locked ? { auth: [{ scheme: 'digest', auth: AUTH }], defaultAcl: LOCKED } : {},
    );
    clients.push(client);
    const daemon = await startWorkerDaemon({
      connect: ns,
      createWorld: true,
      world: name,
      nodeId: `${name}-1`,
      concurrency: 4,
      allowExec: ['/bin/*'],
      runAs: SELF,
      killGraceMs: 500,
      logLevel: 'silent',
      ...(locked ? { auth: [AUTH] } : {}),
    });
    daemons.push(daemon);
    return { name, client, daemon };
  }

  beforeAll(async () => {
    // A chroot nobody made yet: the locked world's worker makes it (--create-world), shared.
    ns = `${inject('zkConnect')}/shared-${randomUUID()}`;
    const locked = await start('locked', true);
    await addSchedule(createEngine(locked.client, { world: 'locked' }), {
      name: 'tick',
      cron: '* * * * * *',
      type: 'zoott.job',
      data: { executable: '/bin/true' },
    });
    await until('the locked world to tick', async () =>
      (await locked.client.children('/zoott_locked')).some((n) => n.startsWith('tick-'))
        ? true
        : undefined,
    );
    const reply = await submitJob(
      locked.client,
      { executable: '/bin/echo', arguments: ['locked'], routingkey: 'rk' },
      { world: 'locked' },
    );
    await settled(locked.client, 'locked', reply.key);
    worlds.push(locked, await start('open', false));
  });

  afterAll(async () => {
    await Promise.allSettled(daemons.map((d) => d.stop()));
    await Promise.allSettled(clients.map((c) => c.close()));
  });

  it("the chroot the locked world's worker made is shared, like the area nodes", async () => {
    const root = await connectZk(inject('zkConnect'));
    clients.push(root);
    expect((await root.getAcl(ns.slice(ns.indexOf('/')))).acl).toEqual([...SHARED_ACL]);
    expect((await root.getAcl(`${ns.slice(ns.indexOf('/'))}/zoott_leaders`)).acl).toEqual([
      ...SHARED_ACL,
    ]);
  });

  it('both schedulers lead and tick', async () => {
    for (const w of worlds) {
      const engine = createEngine(w.client, { world: w.name });
      if (w.name === 'open')
        await addSchedule(engine, {
          name: 'tick',
          cron: '* * * * * *',
          type: 'zoott.job',
          data: { executable: '/bin/true' },
        });
      const root = `/zoott_${w.name}`;
      const seen = new Set(await w.client.children(root));
      await until(`a new tick in ${w.name}`, async () =>
        (await w.client.children(root)).some((n) => n.startsWith('tick-') && !seen.has(n))
          ? true
          : undefined,
      );
    }
  });

  it('both publish replies on the same exchange and routing key, and each reads its own', async () => {
    for (const w of worlds) {
      const routingkey = `rk-${randomUUID()}`;
      const { key } = await submitJob(
        w.client,
        { executable: '/bin/echo', arguments: [w.name], routingkey },
        { world: w.name },
      );
      expect((await settled(w.client, w.name, key)).state).toBe('completed');
      const got = await waitForResult<{ stdout: string }>(w.client, {
        world: w.name,
        routingkey,
        timeoutMs: 20_000,
      });
      expect(got.result.stdout).toBe(`${w.name}\n`);
      expect(got.path.startsWith(replyDir({ routingkey }, w.name))).toBe(true);
    }
  });

  it('both keep the progress their jobs report', async () => {
    for (const w of worlds) {
      const engine = createEngine(w.client, { world: w.name });
      const name = `progress-${w.name}`;
      await engine.queue({
        name,
        type: 'zoott.job',
        data: { executable: '/bin/sh', arguments: ['-c', 'echo "progress 0.5" >&3; sleep 30'] },
      });
      await until(`progress in ${w.name}`, async () =>
        (await engine.progress([name]))?.progress === 0.5 ? true : undefined,
      );
      await engine.cancel([name]);
    }
  });

  it("both reapers remove their world's unconsumed results and completed records", async () => {
    for (const w of worlds) {
      const routingkey = `kept-${randomUUID()}`;
      const { key } = await submitJob(
        w.client,
        { executable: '/bin/echo', arguments: ['unread'], routingkey },
        { world: w.name },
      );
      await settled(w.client, w.name, key);
      const dir = replyDir({ routingkey }, w.name);
      expect(await w.client.children(dir)).toHaveLength(1);
      await updateRetention(w.client, w.name, {
        results: { maxAgeMs: 1 },
        completed: { maxCount: 0 },
      });
      await until(
        `the reaper of ${w.name}`,
        async () => {
          const results = await w.client.children(dir);
          const record = await createEngine(w.client, { world: w.name }).task(key);
          return results.length === 0 && record === null ? true : undefined;
        },
        40_000,
      );
    }
  });
});
