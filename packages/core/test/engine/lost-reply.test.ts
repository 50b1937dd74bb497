import {
  type Coordinator,
  createEngine,
  type Op,
  QueueManyError,
  utf8,
  ZoottError,
} from '@zoott/core';
import { describeOnBackends, losingReplies, type ReplyLoss } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from './helpers.js';

/**
 * A lost reply: the connection drops while a settle multi is in flight and the session
 * survives, so the caller gets CONNECTION_LOSS without knowing whether the multi applied.
 * Seen in the long chaos run: a worker gave up on such a completion, its working node lived on
 * with its session, and the task stayed claimed with nobody to finish it.
 */
/** Which multi a loss hits: a settle deletes a working node, a claim creates one, a queue neither. */
type Target = 'settle' | 'claim' | 'queue';

function targetOf(ops: readonly Op[]): Target {
  const working = ops.filter((o) => o.path.includes('/zoott_w/'));
  if (working.some((o) => o.op === 'delete')) return 'settle';
  if (working.some((o) => o.op === 'create')) return 'claim';
  return 'queue';
}

/**
 * Tasks one multi writes for: each claim or settle creates or deletes one working node, each
 * queued task creates one pending entry.
 */
const tasksIn = (ops: readonly Op[]) =>
  Math.max(
    ops.filter((o) => o.path.includes('/zoott_w/')).length,
    ops.filter((o) => o.op === 'create' && o.path.includes('/zoott_p/')).length,
  );

describeOnBackends('engine: a queue, claim or settle whose reply was lost', (backend) => {
  async function setup() {
    const raw = await backend().connect();
    const lossy = losingReplies(raw);
    /** Loses the reply of the next multi of `target` kind (with `group`: one of several tasks). */
    const arm = (
      loss: ReplyLoss,
      meanwhile?: () => Promise<void>,
      target: Target = 'settle',
      group = false,
    ) =>
      lossy.lose(loss, {
        when: (ops) => targetOf(ops) === target && (!group || tasksIn(ops) > 1),
        ...(meanwhile ? { meanwhile } : {}),
      });
    const wrapped = { c: lossy.c, arm };
    const world = worldName();
    const engine = createEngine(wrapped.c, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    await engine.queue({ name: 'job', type: 't' }, null, null, {
      maxAttempts: 3,
      backoff: { baseMs: 1, maxMs: 1 },
    });
    const claim = await engine.claim({ worker: 'w' });
    expect(claim).not.toBeNull();
    return { ...wrapped, raw, world, engine, claim: claim! };
  }

  for (const fault of ['before', 'after'] as const) {
    it(`complete: a multi lost ${fault} reaching the server still ends completed, once`, async () => {
      const { engine, claim, arm } = await setup();
      arm(fault);
      const out = await engine.complete(claim, { n: 1 });
      expect(out.status).toBe('completed');
      expect(await engine.task(['job'])).toMatchObject({ state: 'completed', result: { n: 1 } });
      expect(await engine.counts()).toMatchObject({ pending: 0, working: 0, completed: 1 });
    });

    it(`fail: a multi lost ${fault} reaching the server leaves one retry entry and no claim`, async () => {
      const { engine, claim, arm } = await setup();
      arm(fault);
      const out = await engine.fail(claim, new Error('boom'));
      expect(out.status).toBe('retrying');
      const counts = await engine.counts();
      expect(counts).toMatchObject({ pending: 1, working: 0 });
      // The task can be claimed again: nothing holds it.
      await new Promise((r) => setTimeout(r, 5));
      const again = await engine.claim({ worker: 'w2' });
      expect(again?.attempt).toBe(2);
    });
  }

  for (const fault of ['before', 'after'] as const) {
    it(`claim: a multi lost ${fault} reaching the server still gives the task to this worker`, async () => {
      const { engine, claim: first, arm } = await setup();
      await engine.complete(first, 'x');
      await engine.queue({ name: 'next', type: 't' });
      arm(fault, undefined, 'claim');
      const claim = await engine.claim({ worker: 'w' });
      // Lost after applying: the claim is adopted (the working node is this session's own).
      // Lost before: nothing was written, and the claimer simply tries again.
      expect(claim?.name).toBe('next');
      expect(claim?.attempt).toBe(1);
      expect(await engine.complete(claim!, 'done')).toMatchObject({ status: 'completed' });
      expect(await engine.counts()).toMatchObject({ pending: 0, working: 0, completed: 2 });
    });
  }

  for (const fault of ['before', 'after'] as const) {
    it(`group claim: a multi of several claims lost ${fault} reaching the server gives each task to this worker once`, async () => {
      const { engine, claim: first, arm } = await setup();
      await engine.complete(first, 'x');
      for (const name of ['p', 'q', 'r']) await engine.queue({ name, type: 't' });
      arm(fault, undefined, 'claim', true);
      const claims = await engine.claimMany(3, { worker: 'w' });
      expect(claims.map((c) => [c.name, c.attempt])).toEqual([
        ['p', 1],
        ['q', 1],
        ['r', 1],
      ]);
      const outs = await Promise.all(claims.map((c) => engine.complete(c, c.name)));
      expect(outs.map((o) => o.status)).toEqual(['completed', 'completed', 'completed']);
      expect(await engine.counts()).toMatchObject({ pending: 0, working: 0, completed: 4 });
    });

    it(`group completion: a multi of several completions lost ${fault} reaching the server completes each once`, async () => {
      const { engine, claim: first, arm } = await setup();
      for (const name of ['p', 'q', 'r']) await engine.queue({ name, type: 't' });
      const claims = [first, ...(await engine.claimMany(3, { worker: 'w' }))];
      expect(claims).toHaveLength(4);
      // The first completion goes alone; the three that wait for it form the group that is lost.
      arm(fault, undefined, 'settle', true);
      const outs = await Promise.all(claims.map((c) => engine.complete(c, c.name)));
      expect(outs.map((o) => o.status)).toEqual([
        'completed',
        'completed',
        'completed',
        'completed',
      ]);
      for (const c of claims)
        expect(await engine.task([c.name])).toMatchObject({ state: 'completed', result: c.name });
      expect(await engine.counts()).toMatchObject({ pending: 0, working: 0, completed: 4 });
    });
  }

  for (const fault of ['before', 'after'] as const) {
    it(`queueMany: a group lost ${fault} reaching the server queues each task exactly once`, async () => {
      const { engine, arm } = await setup();
      arm(fault, undefined, 'queue', true);
      const names = ['m1', 'm2', 'm3', 'm4'];
      const out = await engine.queueMany(names.map((name) => ({ name, type: 't' })));
      // New tasks, found again after the loss (not re-queued over themselves).
      expect(out.map((q) => [q.key[0], q.previous])).toEqual(names.map((n) => [n, null]));
      for (const q of out) expect(q.entry).toMatch(new RegExp(`-${q.key[0]}-\\d{10}$`));
      const pending = (await engine.list('pending')).map((t) => t.key[0]).sort();
      expect(pending).toEqual(names);
    });
  }

  it('queueMany: a group lost with its session says which tasks are queued, which may be, which are not', async () => {
    const raw = await backend().connect();
    const lossy = losingReplies(raw);
    const engine = createEngine(lossy.c, {
      world: worldName(),
      buckets: 2,
      logger: memoryLogger(),
    });
    await engine.init();
    let groups = 0;
    // The second group of 500 is lost on its way, and the session ends: no way to look.
    lossy.lose('before', {
      when: (ops) => targetOf(ops) === 'queue' && tasksIn(ops) > 1 && ++groups === 2,
      meanwhile: () => backend().expireSession(raw),
    });
    const names = Array.from({ length: 1200 }, (_, i) => `t${i}`);
    const call = engine.queueMany(names.map((name) => ({ name, type: 't' })));
    await expect(call).rejects.toBeInstanceOf(QueueManyError);
    await expect(call).rejects.toMatchObject({ field: 'tasks[500]', queued: 500, uncertain: 500 });
    await expect(call).rejects.toThrow(
      /tasks\[0\.\.499\] were queued, tasks\[500\.\.999\] may or may not be .*, tasks\[1000\.\.\] were not/,
    );
    await raw.renewSession();
    expect(await engine.counts()).toMatchObject({ pending: 500 });
  });

  it('queueMany: a group applied as its session ended is reported as may-or-may-not, not as refused', async () => {
    const raw = await backend().connect();
    let groups = 0;
    // The second group of 500 reaches the server, then the session ends before the reply:
    // the client learns only that the session expired.
    const ending = new Proxy(raw, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop !== 'multi') return typeof value === 'function' ? value.bind(target) : value;
        return async (ops: readonly Op[]) => {
          if (!(targetOf(ops) === 'queue' && tasksIn(ops) > 1 && ++groups === 2))
            return target.multi(ops);
          await target.multi(ops);
          await backend().expireSession(raw);
          throw new ZoottError('SESSION_EXPIRED', 'session lost (test)', { op: 'multi' });
        };
      },
    });
    const engine = createEngine(ending, {
      world: worldName(),
      buckets: 2,
      logger: memoryLogger(),
    });
    await engine.init();
    const names = Array.from({ length: 1200 }, (_, i) => `t${i}`);
    const call = engine.queueMany(names.map((name) => ({ name, type: 't' })));
    await expect(call).rejects.toMatchObject({
      code: 'SESSION_EXPIRED',
      field: 'tasks[500]',
      queued: 500,
      uncertain: 500,
    });
    await raw.renewSession();
    // It had landed: the uncertain range is the whole slack.
    expect(await engine.counts()).toMatchObject({ pending: 1000 });
  });

  it('queueMany: a lost group whose look-up fails as the session ends is may-or-may-not', async () => {
    const raw = await backend().connect();
    let groups = 0;
    let looking = false;
    // The second group of 500 lands and its reply is lost while the client still counts as
    // connected; the look for it then fails, the session having ended meanwhile.
    const ending = new Proxy(raw, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop === 'multi')
          return async (ops: readonly Op[]) => {
            if (!(targetOf(ops) === 'queue' && tasksIn(ops) > 1 && ++groups === 2))
              return target.multi(ops);
            await target.multi(ops);
            looking = true;
            throw new ZoottError('CONNECTION_LOSS', 'reply lost (test)', { op: 'multi' });
          };
        if (prop === 'children')
          return async (...args: Parameters<Coordinator['children']>) => {
            if (!looking) return target.children(...args);
            looking = false;
            await backend().expireSession(raw);
            throw new ZoottError('SESSION_EXPIRED', 'session lost (test)', { op: 'children' });
          };
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const engine = createEngine(ending, { world: worldName(), buckets: 2, logger: memoryLogger() });
    await engine.init();
    const names = Array.from({ length: 1200 }, (_, i) => `t${i}`);
    const call = engine.queueMany(names.map((name) => ({ name, type: 't' })));
    await expect(call).rejects.toBeInstanceOf(QueueManyError);
    await expect(call).rejects.toMatchObject({
      code: 'CONNECTION_LOSS',
      field: 'tasks[500]',
      queued: 500,
      uncertain: 500,
    });
    await raw.renewSession();
    expect(await engine.counts()).toMatchObject({ pending: 1000 });
  });

  /**
   * A client whose session the backend ends just before the look after a lost reply makes its
   * `step` (listing the pending bucket, or reading the entry found there); `look()` arms it.
   */
  async function endingDuringLook(step: 'children' | 'get') {
    const raw = await backend().connect();
    const lossy = losingReplies(raw);
    let looking = false;
    const c = new Proxy(lossy.c, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown;
        if (prop !== step || typeof value !== 'function')
          return typeof value === 'function' ? value.bind(target) : value;
        return async (path: string, ...rest: unknown[]) => {
          if (looking && path.includes('/zoott_p/')) {
            looking = false;
            await backend().expireSession(raw);
          }
          return (value as (...a: unknown[]) => Promise<unknown>).call(target, path, ...rest);
        };
      },
    });
    const engine = createEngine(c, { world: worldName(), buckets: 2, logger: memoryLogger() });
    await engine.init();
    const look = async () => {
      looking = true;
    };
    return { raw, lossy, engine, look };
  }

  for (const step of ['children', 'get'] as const) {
    it(`queueMany: a group lost, then its session ended as the look's ${step} went out: may-or-may-not`, async () => {
      const { raw, lossy, engine, look } = await endingDuringLook(step);
      let groups = 0;
      // The second group of 500 lands, its reply is lost, and the connection is fine: it looks.
      lossy.lose('after', {
        when: (ops) => targetOf(ops) === 'queue' && tasksIn(ops) > 1 && ++groups === 2,
        meanwhile: look,
      });
      const names = Array.from({ length: 1200 }, (_, i) => `t${i}`);
      const call = engine.queueMany(names.map((name) => ({ name, type: 't' })));
      await expect(call).rejects.toBeInstanceOf(QueueManyError);
      await expect(call).rejects.toMatchObject({
        field: 'tasks[500]',
        queued: 500,
        uncertain: 500,
      });
      await raw.renewSession();
      // It had landed: the uncertain range is the whole slack.
      expect(await engine.counts()).toMatchObject({ pending: 1000 });
    });

    it(`queue: a write lost, then its session ended as the look's ${step} went out: the loss is the answer, not the look`, async () => {
      const { raw, lossy, engine, look } = await endingDuringLook(step);
      lossy.lose('after', { when: (ops) => targetOf(ops) === 'queue', meanwhile: look });
      // CONNECTION_LOSS: it may or may not be queued (it is). SESSION_EXPIRED from the look
      // would say "refused" to a caller, who would then report the task as not queued.
      await expect(engine.queue({ name: 'maybe', type: 't' })).rejects.toMatchObject({
        code: 'CONNECTION_LOSS',
      });
      await raw.renewSession();
      expect(await engine.counts()).toMatchObject({ pending: 1 });
    });
  }

  it('a group completion lost while its session ends drops every result in it', async () => {
    const { raw, engine, claim: first, arm } = await setup();
    for (const name of ['p', 'q']) await engine.queue({ name, type: 't' });
    const claims = [first, ...(await engine.claimMany(2, { worker: 'w' }))];
    arm('before', () => backend().expireSession(raw), 'settle', true);
    const outs = await Promise.all(claims.map((c) => engine.complete(c, c.name)));
    expect(outs.map((o) => o.status)).toEqual(['completed', 'dropped', 'dropped']);
    await raw.renewSession();
    expect(await engine.counts()).toMatchObject({ pending: 2, working: 0, completed: 1 });
  });

  for (const fault of ['before', 'after'] as const) {
    it(`queue: a multi lost ${fault} reaching the server queues the task exactly once`, async () => {
      const { engine, arm } = await setup();
      arm(fault, undefined, 'queue');
      const [queued] = await engine.queue({ name: 'fresh', type: 't' });
      expect(queued?.key).toEqual(['fresh']);
      expect(queued?.entry).toMatch(/-fresh-\d{10}$/);
      arm(fault, undefined, 'queue');
      // A re-queue (the task exists) whose reply is lost: still one entry, updated.
      const [again] = await engine.queue({ name: 'fresh', type: 't', data: 2 });
      expect(again?.previous).toBe('pending');
      const pending = (await engine.list('pending')).filter((t) => t.key[0] === 'fresh');
      expect(pending).toHaveLength(1);
      expect(await engine.task(['fresh'])).toMatchObject({ state: 'pending', data: 2 });
    });
  }

  it('an orphaned working node of this very session does not block the task from it', async () => {
    // What a lost claim reply that could not be adopted leaves behind: the session's own
    // working node, with no claim held for it. Other sessions must wait for it; this one
    // removes it and claims the task again.
    const { engine, claim } = await setup();
    engine.forget(claim);
    const again = await engine.claim({ worker: 'w' });
    expect(again?.name).toBe('job');
    expect(again?.attempt).toBe(2);
    expect(await engine.complete(again!, 'ok')).toMatchObject({ status: 'completed' });
  });

  it("another engine's claim on the same session is not mistaken for an orphan", async () => {
    const { c, world, claim } = await setup();
    // A second engine (or worker loop) of this process, sharing the session.
    const other = createEngine(c, { world, logger: memoryLogger() });
    expect(await other.claim({ worker: 'w2' })).toBeNull();
    expect(await c.exists(claim.workingPath)).not.toBeNull();
  });

  it('complete with extra ops applied before the reply was lost reports them applied', async () => {
    const { c, engine, claim, arm } = await setup();
    await c.create('/side');
    arm('after');
    const out = await engine.complete(claim, 'r', {
      extraOps: [{ op: 'create', path: '/side/x', data: utf8.encode('reply') }],
    });
    expect(out.status).toBe('completed');
    // Applied by the lost attempt: the results are not known, but nothing must re-publish.
    expect(out.extras).toEqual({ applied: true, results: null });
    expect(await c.children('/side')).toEqual(['x']);
  });

  for (const fault of ['before', 'after'] as const)
    it(`a group of completions with extra ops lost ${fault} reaching the server applies each extra once`, async () => {
      const { c, engine, claim: first, arm } = await setup();
      await c.create('/side');
      for (const name of ['p', 'q', 'r']) await engine.queue({ name, type: 't' });
      const claims = [first, ...(await engine.claimMany(3, { worker: 'w' }))];
      arm(fault, undefined, 'settle', true);
      const outs = await Promise.all(
        claims.map((cl) =>
          engine.complete(cl, cl.name, {
            extraOps: [{ op: 'create', path: `/side/${cl.name}`, data: utf8.encode('reply') }],
          }),
        ),
      );
      expect(outs.map((o) => [o.status, o.extras?.applied])).toEqual(
        claims.map(() => ['completed', true]),
      );
      // Applied by the lost group: the results are not known, and nothing was written twice.
      const unknown = outs.slice(1).map((o) => (o.extras?.applied ? o.extras.results : 'left out'));
      expect(unknown).toEqual(
        fault === 'after' ? [null, null, null] : unknown.map(() => expect.any(Array)),
      );
      expect((await c.children('/side')).sort()).toEqual(['job', 'p', 'q', 'r']);
      expect(await engine.counts()).toMatchObject({ pending: 0, working: 0, completed: 4 });
    });

  it('complete with an extra op that fails after a lost reply completes without it', async () => {
    const { c, engine, claim, arm } = await setup();
    // Lost before reaching the server: the re-issue is refused for the extra op alone.
    arm('before');
    const out = await engine.complete(claim, 'r', {
      extraOps: [{ op: 'create', path: '/missing/x', data: utf8.encode('reply') }],
    });
    expect(out).toMatchObject({ status: 'completed', extras: { applied: false } });
    expect(await engine.task(['job'])).toMatchObject({ state: 'completed', result: 'r' });
    expect(await c.exists('/missing')).toBeNull();
  });

  it('a session lost while the outcome is unknown drops the result (the claim is gone)', async () => {
    const { raw, engine, claim, arm } = await setup();
    // While the multi is lost, the session expires: the claim died with it.
    arm('before', () => backend().expireSession(raw));
    const out = await engine.complete(claim, 'late');
    expect(out.status).toBe('dropped');
    await raw.renewSession();
    expect(await engine.task(['job'])).toMatchObject({ state: 'pending' });
  });
});
