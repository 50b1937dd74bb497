import {
  type Acl,
  addSchedule,
  createEngine,
  digestAcl,
  runScheduler,
  setRateLimit,
} from '@zoott/core';
import { lockDownWorld } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from '../engine/helpers.js';

const ACL: Acl[] = [digestAcl('alice', 'pw', 'cdrwa')];

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code,
  );

describeOnBackends('lock-down covers schedules, rate limits and elections', (backend) => {
  it('a stranger can no longer add a schedule, change a limit or stand for scheduler', async () => {
    const world = worldName('ld');
    const stranger = await backend().connect();
    const open = createEngine(stranger, { world, buckets: 2, logger: memoryLogger() });
    await open.init();
    await addSchedule(open, { name: 'nightly', cron: '0 2 * * *', type: 't' });
    await setRateLimit(open, 't', '5/s');
    const s = runScheduler(open);
    await eventually(() => s.isLeader);
    await s.stop();

    const owner = await backend().connect();
    await owner.addAuth('digest', 'alice:pw');
    const report = await lockDownWorld(owner, world, ACL);
    for (const path of [
      `/zoott_schedules/${world}/nightly`,
      `/zoott_limits/${world}/t`,
      `/zoott_leaders/${world}/scheduler`,
    ])
      expect(report.changed.map((c) => c.path)).toContain(path);

    expect(await codeOf(addSchedule(open, { name: 'evil', cron: '* * * * *', type: 't' }))).toBe(
      'NO_AUTH',
    );
    expect(await codeOf(setRateLimit(open, 't', '1000/s'))).toBe('NO_AUTH');
    expect(await codeOf(stranger.create(`/zoott_leaders/${world}/scheduler/c-x-`))).toBe('NO_AUTH');
    const mine = createEngine(owner, { world, logger: memoryLogger() });
    await setRateLimit(mine, 't', '10/s');
  });
});
