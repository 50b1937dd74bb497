import { type Coordinator, createEngine, runWorker, utf8 } from '@zoott/core';
import { diagnoseWorld, encodeJson, type Finding, repairWorld } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, repairAll, worldName } from '../engine/helpers.js';

/** Every kind of damage `diagnoseWorld` knows, made by hand with a raw client. */
async function damagedWorld(c: Coordinator) {
  const world = worldName('doc');
  const engine = createEngine(c, { world, buckets: 1, logger: memoryLogger() });
  await engine.init();
  await engine.queue({ name: 'good', type: 't', data: { n: 1 } });
  await engine.queue({ name: 'child', type: 't' }, { key: ['good'] });
  await engine.queue({ name: 'orphan', type: 't' });
  const ctx = await engine.context();
  const L = ctx.layout;
  // An entry whose tree node was deleted by hand.
  await c.delete(L.treePath(['orphan']));
  // A completed record of a task that never was.
  await c.create(L.recordPath('c', ['never']), encodeJson({ result: 1 }));
  // A claim and a registration that no session owns.
  await c.create(L.recordPath('w', ['good']), encodeJson({ worker: 'ghost', session: '0', at: 1 }));
  await c.create(`${L.registry}/worker-0000000042`, encodeJson({ id: 'ghost', types: ['t'] }));
  // Garbage in the pending area: a foreign name, and an entry name with non-JSON data.
  await c.create(`${L.bucketPath('p', 0)}/junk`, utf8.encode('hello'));
  await c.create(`${L.bucketPath('p', 0)}/q1000000-bogus-0000000099`, utf8.encode('{not json'));
  // Tree nodes: one not JSON, one in no state.
  await c.create(L.treePath(['garbled']), utf8.encode('<xml/>'));
  await c.create(L.treePath(['lonely']), encodeJson({ name: 'lonely', type: 't' }));
  // A race world whose world does not exist.
  await c.create(`/zoott_${world}gone~races`, encodeJson({ zoott: 1, buckets: 1 }));
  return { world, engine, ctx };
}

const summary = (fs: Finding[]) => fs.map((f) => `${f.kind} ${f.path} ${f.repair}`).sort();

describeOnBackends('engine: doctor', (backend) => {
  it('finds every kind of hand-made damage; repair quarantines what is safe and the engine then runs cleanly', async () => {
    const c = await backend().connect();
    const { world, engine, ctx } = await damagedWorld(c);
    const L = ctx.layout;
    const p0 = L.bucketPath('p', 0);
    const orphanEntry = (await c.children(p0)).find((n) => n.includes('-orphan-'))!;
    const findings = await diagnoseWorld(ctx);
    expect(summary(findings)).toEqual(
      [
        `corrupt ${p0}/junk quarantine`,
        `corrupt ${p0}/q1000000-bogus-0000000099 quarantine`,
        `corrupt /zoott_${world}/garbled none`,
        `leftover-world /zoott_${world}gone~races none`,
        `no-state /zoott_${world}/garbled none`,
        `no-state /zoott_${world}/lonely none`,
        `not-ephemeral ${L.recordPath('w', ['good'])} quarantine`,
        `not-ephemeral ${L.registry}/worker-0000000042 quarantine`,
        `orphan ${p0}/${orphanEntry} quarantine`,
        `orphan ${L.recordPath('c', ['never'])} quarantine`,
      ].sort(),
    );

    const moved = await repairAll(c, world, findings);
    // Nothing is lost: each quarantined node keeps where it was and its bytes.
    const items = await c.children(`/zoott_q/${world}`);
    expect(items).toHaveLength(moved.length);
    const kept = await Promise.all(
      items.map(async (n) => JSON.parse(utf8.decode((await c.get(`/zoott_q/${world}/${n}`)).data))),
    );
    expect(kept.find((k) => k.from === `${p0}/junk`)?.data).toBe('hello');
    expect(summary(await diagnoseWorld(ctx))).toEqual(
      summary(findings.filter((f) => f.repair === 'none')),
    );
    // A second repair has nothing to move.
    expect(await repairWorld(c, world, await diagnoseWorld(ctx))).toEqual({
      moved: [],
      notMoved: [],
    });

    const wc = await backend().connect();
    const logger = memoryLogger();
    const worker = runWorker(wc, { t: (t) => t.name }, { world, logger, pollMs: 200 });
    try {
      await eventually(async () => (await engine.task(['good', 'child']))?.state === 'completed');
    } finally {
      await worker.stop();
    }
    expect(await engine.counts()).toEqual({ pending: 0, working: 0, completed: 2, failed: 0 });
    expect(logger.lines.filter((l) => /persistent|not a zoott entry/.test(l))).toEqual([]);
  });
});
