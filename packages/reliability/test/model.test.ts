/**
 * Model-based test of the engine on the memory adapter: fast-check generates
 * random interleavings of queue, claim, complete, fail, retry, cancel, worker crash, session
 * expiry, reconnect and lost replies (a claim or settle multi answered by CONNECTION_LOSS,
 * before or after it applied) across three workers; after every step the real world (read back
 * through the engine) must equal a small reference model. A lost reply changes nothing the
 * model can see: the engine must find out what happened and carry on as if it had not.
 * Claims and completions of several tasks at once go out as group commits (one multi for
 * many tasks); a stale claim inside a group, or a group whose reply was lost, must not change
 * the outcome of any task in it. A completion may hand off a child (claim it in the same
 * multi): the child must be runnable then, and a lost reply must not change that either.
 */
import {
  type Claim,
  createEngine,
  type Engine,
  isZoottError,
  type Op,
  type SettleOutcome,
  type TaskKey,
} from '@zoott/core';
import { type MemoryCoordinator, MemoryServer } from '@zoott/memory-adapter';
import { losingReplies, type ReplyLoss } from '@zoott/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

type State = 'pending' | 'working' | 'completed' | 'failed' | null;

/** The key universe: four trees, depth up to 3 (four roots, so groups of claims form). */
const KEYS = ['a', 'b', 'c', 'd', 'a|x', 'a|y', 'b|x', 'a|x|z'];
const MAX_ATTEMPTS = 2;
const WORKERS = 3;
const WORLD = 'model';
const quiet = { warn: () => {} };

interface ModelTask {
  state: State;
  attempts: number;
  /** Token of the claim that holds it while working. */
  holder: number | null;
}

interface ModelClaim {
  token: number;
  claim: Claim;
}

interface Model {
  /** Tree nodes that exist, with their task state. */
  tasks: Map<string, ModelTask>;
  /** Claims each worker's engine holds and has not settled (void ones included). */
  held: ModelClaim[][];
  nextToken: number;
}

type Loss = ReplyLoss | null;

interface Real {
  server: MemoryServer;
  admin: Engine;
  /** Makes the admin engine's next multi (a queue) lose its reply. */
  adminLose(loss: Loss): void;
  /** `c` is the session itself; the engine talks through a proxy that can lose a reply. */
  workers: {
    c: MemoryCoordinator;
    engine: Engine;
    lose(loss: Loss, when?: (ops: readonly Op[]) => boolean): void;
  }[];
}

const parentOf = (k: string) => (k.includes('|') ? k.slice(0, k.lastIndexOf('|')) : null);
const ancestors = (k: string) => {
  const names = k.split('|');
  return names.slice(1).map((_, i) => names.slice(0, i + 1).join('|'));
};
const toKey = (k: string): TaskKey => k.split('|');

function runnable(m: Model, k: string): boolean {
  const t = m.tasks.get(k);
  if (t?.state !== 'pending') return false;
  return ancestors(k).every((a) => {
    const s = m.tasks.get(a)?.state;
    return s !== 'pending' && s !== 'working' && s !== 'failed';
  });
}

async function codeOfCall(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (isZoottError(err)) return err.code;
    throw err;
  }
}

/** The world as the engine reports it must be the model, key by key. */
let stepsChecked = 0;

async function compare(m: Model, r: Real): Promise<void> {
  stepsChecked++;
  for (const k of KEYS) {
    const got = await r.admin.task(toKey(k));
    const want = m.tasks.get(k);
    if (!want) {
      expect(got, `${k} should not exist`).toBeNull();
      continue;
    }
    expect(got, `${k} should exist`).not.toBeNull();
    expect({ key: k, state: got!.state }).toEqual({ key: k, state: want.state });
    if (want.state !== null)
      expect({ key: k, attempts: got!.attempts }).toEqual({ key: k, attempts: want.attempts });
  }
}

function voidClaimsOf(m: Model, token: number) {
  for (const t of m.tasks.values()) if (t.holder === token) t.holder = null;
}

/**
 * A claim may dead-letter exhausted tasks (their workers crashed) on its way: reads back which
 * of `keys` it did, insists they were exhausted, and records them failed.
 */
async function noteDeadLettered(m: Model, r: Real, keys: readonly string[]): Promise<void> {
  for (const k of keys) {
    if ((await r.admin.task(toKey(k)))?.state !== 'failed') continue;
    const t = m.tasks.get(k)!;
    expect(t.attempts >= MAX_ATTEMPTS, `${k} dead-lettered without being exhausted`).toBe(true);
    m.tasks.set(k, { state: 'failed', attempts: t.attempts, holder: null });
  }
}

class QueueCmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly key: string,
    readonly loss: Loss = null,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const parent = parentOf(this.key);
    const name = this.key.split('|').pop()!;
    r.adminLose(this.loss);
    const call = r.admin.queue(
      { name, type: 't' },
      parent === null ? null : { key: toKey(parent) },
      null,
      { maxAttempts: MAX_ATTEMPTS },
    );
    const code = await codeOfCall(call);
    r.adminLose(null);
    const t = m.tasks.get(this.key);
    if (parent !== null && !m.tasks.has(parent)) expect(code).toBe('NO_SUCH_TASK');
    else if (t?.state === 'working') expect(code).toBe('TASK_STATE');
    else {
      expect(code).toBeNull();
      m.tasks.set(this.key, { state: 'pending', attempts: 0, holder: null });
    }
    await compare(m, r);
  }
  toString = () => `queue(${this.key}${this.loss ? `, reply lost ${this.loss}` : ''})`;
}

class ClaimCmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly w: number,
    readonly loss: Loss = null,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const heldKeys = new Set(m.held[this.w]!.map((h) => h.claim.key.join('|')));
    const eligible = KEYS.filter((k) => runnable(m, k) && !heldKeys.has(k));
    const exhausted = (k: string) => m.tasks.get(k)!.attempts >= MAX_ATTEMPTS;
    r.workers[this.w]!.lose(this.loss);
    const claim = await r.workers[this.w]!.engine.claim({ worker: `w${this.w}` });
    r.workers[this.w]!.lose(null);
    await noteDeadLettered(m, r, eligible);
    if (claim === null) {
      const left = eligible.filter((k) => m.tasks.get(k)!.state === 'pending' && !exhausted(k));
      expect(left, 'claim returned nothing while these were runnable').toEqual([]);
    } else {
      const k = claim.key.join('|');
      expect(eligible, `claimed ${k}, which is not runnable`).toContain(k);
      expect(exhausted(k)).toBe(false);
      const t = m.tasks.get(k)!;
      const token = m.nextToken++;
      m.tasks.set(k, { state: 'working', attempts: t.attempts + 1, holder: token });
      expect(claim.attempt).toBe(t.attempts + 1);
      m.held[this.w]!.push({ token, claim });
    }
    await compare(m, r);
  }
  toString = () => `claim(w${this.w}${this.loss ? `, reply lost ${this.loss}` : ''})`;
}

/**
 * Queues several keys in one call (group commits). In order: a task whose parent does not
 * exist, or that is being worked on, ends the call with an error; the ones before it are queued.
 */
class QueueManyCmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly keys: string[],
    readonly loss: Loss = null,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    r.adminLose(this.loss);
    const call = r.admin.queueMany(
      this.keys.map((k) => {
        const parent = parentOf(k);
        return {
          name: k.split('|').pop()!,
          type: 't',
          maxAttempts: MAX_ATTEMPTS,
          ...(parent === null ? {} : { parent: { key: toKey(parent) } }),
        };
      }),
    );
    const code = await codeOfCall(call);
    r.adminLose(null);
    let expected: string | null = null;
    for (const k of this.keys) {
      const parent = parentOf(k);
      if (parent !== null && !m.tasks.has(parent)) expected = 'NO_SUCH_TASK';
      else if (m.tasks.get(k)?.state === 'working') expected = 'TASK_STATE';
      if (expected) break;
      m.tasks.set(k, { state: 'pending', attempts: 0, holder: null });
    }
    expect(code).toBe(expected);
    await compare(m, r);
  }
  toString = () =>
    `queueMany(${this.keys.join(', ')}${this.loss ? `, reply lost ${this.loss}` : ''})`;
}

/** Only a multi for several tasks (a group commit) loses its reply. */
const groupOnly = (ops: readonly Op[]) =>
  ops.filter((o) => o.path.includes('/zoott_w/')).length > 1;

/** A worker claims up to `n` tasks at once: one group commit when several are runnable. */
class ClaimManyCmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly w: number,
    readonly n: number,
    readonly loss: Loss = null,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const heldKeys = new Set(m.held[this.w]!.map((h) => h.claim.key.join('|')));
    const eligible = KEYS.filter((k) => runnable(m, k) && !heldKeys.has(k));
    const exhausted = (k: string) => m.tasks.get(k)!.attempts >= MAX_ATTEMPTS;
    r.workers[this.w]!.lose(this.loss, groupOnly);
    const claims = await r.workers[this.w]!.engine.claimMany(this.n, { worker: `w${this.w}` });
    r.workers[this.w]!.lose(null);
    await noteDeadLettered(m, r, eligible);
    expect(claims.length).toBeLessThanOrEqual(this.n);
    if (claims.length === 0) {
      const left = eligible.filter((k) => m.tasks.get(k)!.state === 'pending' && !exhausted(k));
      expect(left, 'claimMany returned nothing while these were runnable').toEqual([]);
    }
    const seen = new Set<string>();
    for (const claim of claims) {
      const k = claim.key.join('|');
      expect(seen.has(k), `${k} claimed twice in one call`).toBe(false);
      seen.add(k);
      expect(eligible, `claimed ${k}, which is not runnable`).toContain(k);
      expect(exhausted(k)).toBe(false);
      const t = m.tasks.get(k)!;
      const token = m.nextToken++;
      m.tasks.set(k, { state: 'working', attempts: t.attempts + 1, holder: token });
      expect(claim.attempt).toBe(t.attempts + 1);
      m.held[this.w]!.push({ token, claim });
    }
    await compare(m, r);
  }
  toString = () =>
    `claimMany(w${this.w}, ${this.n}${this.loss ? `, reply lost ${this.loss}` : ''})`;
}

/** A worker completes several held claims at once: they go out as a group commit. */
class CompleteManyCmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly w: number,
    readonly n: number,
    readonly loss: Loss = null,
  ) {}
  check = (m: Readonly<Model>) => m.held[this.w]!.length > 1;
  async run(m: Model, r: Real) {
    const picked = m.held[this.w]!.splice(0, this.n);
    const engine = r.workers[this.w]!.engine;
    r.workers[this.w]!.lose(this.loss, groupOnly);
    const outs = await Promise.all(picked.map((h) => engine.complete(h.claim, { by: this.w })));
    r.workers[this.w]!.lose(null);
    picked.forEach(({ token, claim }, i) => {
      const k = claim.key.join('|');
      const t = m.tasks.get(k);
      if (t?.holder !== token) expect(outs[i]!.status, `${k}: stale`).toBe('dropped');
      else {
        expect(outs[i]!.status, `${k}: current`).toBe('completed');
        m.tasks.set(k, { state: 'completed', attempts: claim.attempt, holder: null });
      }
    });
    await compare(m, r);
  }
  toString = () =>
    `completeMany(w${this.w}, ${this.n}${this.loss ? `, reply lost ${this.loss}` : ''})`;
}

class SettleCmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly w: number,
    readonly pick: number,
    readonly how: 'complete' | 'fail',
    readonly loss: Loss = null,
  ) {}
  check = (m: Readonly<Model>) => m.held[this.w]!.length > 0;
  async run(m: Model, r: Real) {
    const list = m.held[this.w]!;
    const [held] = list.splice(this.pick % list.length, 1);
    const { token, claim } = held!;
    const k = claim.key.join('|');
    const engine = r.workers[this.w]!.engine;
    r.workers[this.w]!.lose(this.loss);
    const out: SettleOutcome =
      this.how === 'complete'
        ? await engine.complete(claim, { by: this.w })
        : await engine.fail(claim, new Error('boom'));
    r.workers[this.w]!.lose(null);
    const t = m.tasks.get(k);
    if (t?.holder !== token) {
      expect(out.status).toBe('dropped');
    } else if (this.how === 'complete') {
      expect(out.status).toBe('completed');
      m.tasks.set(k, { state: 'completed', attempts: claim.attempt, holder: null });
    } else {
      const last = claim.attempt >= MAX_ATTEMPTS;
      expect(out.status).toBe(last ? 'failed' : 'retrying');
      m.tasks.set(k, { state: last ? 'failed' : 'pending', attempts: claim.attempt, holder: null });
    }
    await compare(m, r);
  }
  toString = () =>
    `${this.how}(w${this.w}#${this.pick}${this.loss ? `, reply lost ${this.loss}` : ''})`;
}

/**
 * A worker completes a claim with `handOff`: a child the completion makes runnable may be
 * claimed in the same multi. Whatever it hands off must be runnable now, under the completed
 * task, and counted as one more attempt; a lost reply must not change that.
 */
class HandOffCmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly w: number,
    readonly pick: number,
    readonly loss: Loss = null,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const list = m.held[this.w]!;
    // Holding nothing, the worker claims first (a claim step of its own, checked as one).
    if (list.length === 0) await new ClaimCmd(this.w).run(m, r);
    if (list.length === 0) return;
    const [held] = list.splice(this.pick % list.length, 1);
    const { token, claim } = held!;
    const k = claim.key.join('|');
    const heldKeys = new Set(list.map((h) => h.claim.key.join('|')));
    r.workers[this.w]!.lose(this.loss);
    const out = await r.workers[this.w]!.engine.complete(claim, { by: this.w }, { handOff: true });
    r.workers[this.w]!.lose(null);
    if (m.tasks.get(k)?.holder !== token) {
      expect(out.status).toBe('dropped');
      expect(out.next).toBeUndefined();
      await compare(m, r);
      return;
    }
    expect(out.status).toBe('completed');
    m.tasks.set(k, { state: 'completed', attempts: claim.attempt, holder: null });
    // What it may hand off: a task under k runnable now. An exhausted one is dead-lettered.
    const opened = KEYS.filter((c) => c.startsWith(`${k}|`) && runnable(m, c) && !heldKeys.has(c));
    await noteDeadLettered(m, r, opened);
    if (out.next) {
      const c = out.next.key.join('|');
      expect(opened, `handed off ${c}, which is not runnable under ${k}`).toContain(c);
      const t = m.tasks.get(c)!;
      expect(out.next.attempt).toBe(t.attempts + 1);
      const next = m.nextToken++;
      m.tasks.set(c, { state: 'working', attempts: t.attempts + 1, holder: next });
      list.push({ token: next, claim: out.next });
    }
    await compare(m, r);
  }
  toString = () =>
    `completeHandingOff(w${this.w}#${this.pick}${this.loss ? `, reply lost ${this.loss}` : ''})`;
}

class RetryCmd implements fc.AsyncCommand<Model, Real> {
  constructor(readonly key: string) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const code = await codeOfCall(r.admin.retry(toKey(this.key)));
    const t = m.tasks.get(this.key);
    if (t?.state === 'failed') {
      expect(code).toBeNull();
      m.tasks.set(this.key, { state: 'pending', attempts: 0, holder: null });
    } else expect(code).toBe('TASK_STATE');
    await compare(m, r);
  }
  toString = () => `retry(${this.key})`;
}

class CancelCmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly key: string,
    readonly subtree: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const code = await codeOfCall(r.admin.cancel(toKey(this.key), { subtree: this.subtree }));
    if (!m.tasks.has(this.key)) {
      expect(code).toBe('NO_SUCH_TASK');
      await compare(m, r);
      return;
    }
    const hasChildren = [...m.tasks.keys()].some((c) => parentOf(c) === this.key);
    if (!this.subtree && hasChildren) {
      // A parent is never cancelled alone: that would leave it stateless above live children.
      expect(code).toBe('TASK_STATE');
      await compare(m, r);
      return;
    }
    expect(code).toBeNull();
    const below = [...m.tasks.keys()].filter((k) => k.startsWith(`${this.key}|`));
    for (const k of [...below, this.key]) m.tasks.delete(k);
    await compare(m, r);
  }
  toString = () => `cancel(${this.key}${this.subtree ? ', subtree' : ''})`;
}

/** The worker's session ends under it (crash, or expiry while cut off); it renews it. */
class ExpireCmd implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly w: number,
    readonly whileDisconnected: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const { c } = r.workers[this.w]!;
    if (this.whileDisconnected) c.disconnect();
    r.server.expireSession(c.sessionId!);
    if (this.whileDisconnected) c.reconnect();
    expect(c.state).toBe('lost');
    await c.renewSession();
    for (const h of m.held[this.w]!) {
      const t = m.tasks.get(h.claim.key.join('|'));
      if (t?.holder === h.token) t.state = 'pending';
      voidClaimsOf(m, h.token);
    }
    await compare(m, r);
  }
  toString = () => `expire(w${this.w}${this.whileDisconnected ? ', disconnected' : ''})`;
}

/** The connection drops and comes back within the session timeout: claims stay valid. */
class ReconnectCmd implements fc.AsyncCommand<Model, Real> {
  constructor(readonly w: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const { c } = r.workers[this.w]!;
    c.disconnect();
    expect(await codeOfCall(r.workers[this.w]!.engine.counts())).toBe('CONNECTION_LOSS');
    c.reconnect();
    expect(c.state).toBe('connected');
    await compare(m, r);
  }
  toString = () => `reconnect(w${this.w})`;
}

const key = fc.constantFrom(...KEYS);
const worker = fc.integer({ min: 0, max: WORKERS - 1 });
const loss = fc.constantFrom('before' as const, 'after' as const);
const commands = [
  key.map((k) => new QueueCmd(k)),
  key.map((k) => new QueueCmd(k)),
  key.map((k) => new QueueCmd(k)),
  worker.map((w) => new ClaimCmd(w)),
  worker.map((w) => new ClaimCmd(w)),
  fc
    .tuple(worker, fc.nat(), fc.constantFrom('complete' as const, 'fail' as const))
    .map(([w, i, how]) => new SettleCmd(w, i, how)),
  fc.tuple(worker, fc.nat()).map(([w, i]) => new SettleCmd(w, i, 'complete')),
  key.map((k) => new RetryCmd(k)),
  fc.tuple(key, fc.boolean()).map(([k, s]) => new CancelCmd(k, s)),
  fc.tuple(key, loss).map(([k, l]) => new QueueCmd(k, l)),
  fc.tuple(worker, loss).map(([w, l]) => new ClaimCmd(w, l)),
  fc
    .tuple(worker, fc.nat(), fc.constantFrom('complete' as const, 'fail' as const), loss)
    .map(([w, i, how, l]) => new SettleCmd(w, i, how, l)),
  fc.shuffledSubarray(KEYS, { minLength: 2, maxLength: 5 }).map((ks) => new QueueManyCmd(ks)),
  fc
    .tuple(fc.shuffledSubarray(KEYS, { minLength: 2, maxLength: 5 }), loss)
    .map(([ks, l]) => new QueueManyCmd(ks, l)),
  fc.tuple(worker, fc.integer({ min: 2, max: 4 })).map(([w, n]) => new ClaimManyCmd(w, n)),
  fc
    .tuple(worker, fc.integer({ min: 2, max: 4 }), loss)
    .map(([w, n, l]) => new ClaimManyCmd(w, n, l)),
  // Twice as likely: it only runs when a worker holds two claims or more.
  fc.tuple(worker, fc.integer({ min: 2, max: 4 })).map(([w, n]) => new CompleteManyCmd(w, n)),
  fc.tuple(worker, fc.integer({ min: 2, max: 4 })).map(([w, n]) => new CompleteManyCmd(w, n)),
  fc
    .tuple(worker, fc.integer({ min: 2, max: 4 }), loss)
    .map(([w, n, l]) => new CompleteManyCmd(w, n, l)),
  fc.tuple(worker, fc.nat()).map(([w, i]) => new HandOffCmd(w, i)),
  fc.tuple(worker, fc.nat(), loss).map(([w, i, l]) => new HandOffCmd(w, i, l)),
  fc.tuple(worker, fc.boolean()).map(([w, d]) => new ExpireCmd(w, d)),
  worker.map((w) => new ReconnectCmd(w)),
];

async function setup(): Promise<{ model: Model; real: Real }> {
  const server = new MemoryServer();
  const opts = {
    world: WORLD,
    buckets: 2,
    logger: quiet,
    defaults: { backoff: { baseMs: 0, maxMs: 0 } },
  };
  const adminWire = losingReplies(await server.connect());
  const admin = createEngine(adminWire.c, opts);
  await admin.init();
  const workers = [];
  for (let i = 0; i < WORKERS; i++) {
    const c = await server.connect();
    const wire = losingReplies(c);
    workers.push({
      c,
      engine: createEngine(wire.c, opts),
      lose: (loss: Loss, when?: (ops: readonly Op[]) => boolean) =>
        wire.lose(loss, when ? { when } : {}),
    });
  }
  return {
    model: { tasks: new Map(), held: workers.map(() => []), nextToken: 1 },
    real: { server, admin, adminLose: adminWire.lose, workers },
  };
}

const RUNS = Number(process.env.ZOOTT_MODEL_RUNS ?? '250');
const STEPS = 60;

describe('engine model (memory adapter, 3 workers)', () => {
  it(`agrees with the reference model over ${RUNS} random histories of up to ${STEPS} steps`, async () => {
    stepsChecked = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: STEPS, size: 'max' }), async (cmds) => {
        const { model, real } = await setup();
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        } finally {
          for (const w of real.workers) {
            w.engine.close();
            await w.c.close();
          }
          real.admin.close();
        }
      }),
      {
        numRuns: RUNS,
        // Replays a failure: the seed and path fast-check printed for it.
        ...(process.env.ZOOTT_MODEL_SEED ? { seed: Number(process.env.ZOOTT_MODEL_SEED) } : {}),
        ...(process.env.ZOOTT_MODEL_PATH ? { path: process.env.ZOOTT_MODEL_PATH } : {}),
      },
    );
    console.log(`[model] ${stepsChecked} steps checked against the model`);
    expect(stepsChecked).toBeGreaterThan(RUNS * 20);
  }, 120_000);
});
