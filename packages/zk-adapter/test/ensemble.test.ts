import { startEnsemble, type ZooKeeperEnsemble } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytes, open, text } from './helpers.js';

describe('a 3-server ensemble', () => {
  let ensemble: ZooKeeperEnsemble;
  beforeAll(async () => {
    ensemble = await startEnsemble();
  });
  afterAll(async () => {
    await ensemble?.stop();
  });

  it('keeps serving the client when the leader is killed mid-operation', async () => {
    const zk = await open(ensemble.connectString, { sessionTimeoutMs: 10_000 });
    const id = zk.sessionId;
    await zk.create('/counter', bytes('0'));
    const leader = await ensemble.leader();
    // Writes run while the leader dies; each set is retried across the election.
    const writes = (async () => {
      for (let i = 1; i <= 20; i++) await zk.set('/counter', bytes(String(i)));
    })();
    await ensemble.stopMember(leader);
    await writes;
    expect(text((await zk.get('/counter')).data)).toBe('20');
    expect(zk.sessionId).toBe(id);
    const next = await ensemble.leader();
    expect(next).not.toBe(leader);
    await ensemble.startMember(leader);
    await zk.create('/after', bytes('ok'));
    // A server that is back answers from its own copy, which may not have applied the write
    // yet (a new session's reads are not synced with other servers): its watch says when.
    const other = await open(ensemble.members[leader]!.connectString);
    let applied = () => {};
    const created = new Promise<void>((resolve) => {
      applied = resolve;
    });
    if ((await other.exists('/after', { watch: () => applied() })) === null) await created;
    expect(text((await other.get('/after')).data)).toBe('ok');
  });
});
