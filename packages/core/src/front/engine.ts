import { Claimer, type ClaimerOptions } from '../claim/claimer.js';
import { CompletionListings, lookForChildren } from '../claim/late-children.js';
import type { Coordinator, Op } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { ChildHints } from '../engine/child-hints.js';
import { systemEngineClock } from '../engine/clock.js';
import { type EngineContext, type EngineOwned, makeContext } from '../engine/context.js';
import { type EngineOptions, type SettleDetail, tellSettled } from '../engine/engine-options.js';
import { codeOf } from '../engine/errors.js';
import { watchEvents } from '../engine/events.js';
import { CompletionGroups } from '../engine/group-commit.js';
import { claimsHeldThrough } from '../engine/held-claims.js';
import { initWorld } from '../engine/init-world.js';
import { countAreas, listTasks, taskRecord, taskTree } from '../engine/inspect.js';
import { DEFAULT_BUCKETS, validateBuckets, WorldLayout } from '../engine/layout.js';
import { parseMeta } from '../engine/meta.js';
import { type PauseState, readPause, setPause } from '../engine/pause.js';
import { isPermanent } from '../engine/permanent.js';
import { readProgress, type TaskProgress } from '../engine/progress.js';
import { queueAt, resolveQueueOptions } from '../engine/queue.js';
import { QueueIds } from '../engine/queue-ids.js';
import { queueManyAt } from '../engine/queue-many.js';
import {
  type QueueManyRequest,
  type QueueParent,
  type QueueRequest,
  queueArguments,
} from '../engine/queue-request.js';
import {
  type CompleteOptions,
  type CompleteOutcome,
  failClaim,
  releaseClaim,
} from '../engine/settle.js';
import { cancelTask, retryTask } from '../engine/task-ops.js';
import { settleTraced } from '../engine/task-spans.js';
import type {
  AreaCounts,
  Claim,
  EngineClock,
  EngineEvent,
  ListedTask,
  QueuedTask,
  QueueOptions,
  SettleOutcome,
  TaskRecord,
  TaskStateName,
  TreeNode,
} from '../engine/types.js';
import { type TaskEnd, type WaitForOptions, waitForTask } from '../engine/wait-for-task.js';
import { walkTree } from '../engine/walk.js';
import { childNamesFor, type NameFunctor } from '../tree/functors.js';
import { KEY_SEPARATOR, type TaskKey, validateKey } from '../tree/keys.js';
import { validateEngineWorldName, validateTaskInfo } from '../tree/names.js';
import { compileParentPattern } from '../tree/patterns.js';
import type { AnyTasks, TaskInfo, TaskMap, TaskResult, TaskType } from '../tree/task-map.js';

/** No ops: shared by the completions that carry none. */
const NO_OPS: readonly Op[] = [];

export type { EngineOptions, SettleDetail, SettleListener } from '../engine/engine-options.js';
export type { QueueManyRequest, QueueParent, QueueRequest } from '../engine/queue-request.js';

/**
 * The task engine of one world, written against the Coordinator contract only.
 * See docs/protocol.md for the layout and guarantees.
 */
export class Engine<M extends TaskMap<M> = AnyTasks> {
  readonly world: string;
  private ctxPromise: Promise<EngineContext> | null = null;
  /** What `ctxPromise` resolved to, once it has: every settle reads it, without a wait. */
  private ctxNow: EngineContext | null = null;
  /** Keys claimed through this engine and not yet settled. */
  private readonly held = new Set<string>();
  private defaultClaimer: Claimer | null = null;
  private defaultClaimerId = '';
  /** Claimers made by this engine: a released claim is re-listed by all of them. */
  private readonly claimers = new Set<Claimer>();
  private groups: { ctx: EngineContext; groups: CompletionGroups } | null = null;
  /** Per engine, not per process: two Engine objects of one process keep their own. */
  private readonly owned: EngineOwned = { hints: new ChildHints(), queueIds: new QueueIds() };

  constructor(
    readonly coordinator: Coordinator,
    private readonly options: EngineOptions,
  ) {
    this.world = validateEngineWorldName(options.world);
    validateBuckets(options.buckets);
  }

  /** The engine's source of time and randomness: the one given in the options, else the system's. */
  get clock(): EngineClock {
    return this.options.clock ?? systemEngineClock;
  }

  /** The context, reading the world meta once (the bucket count is fixed per world). */
  context(): Promise<EngineContext> {
    if (!this.ctxPromise) {
      const root = new WorldLayout(this.world, 1).root;
      this.ctxPromise = this.coordinator.get(root).then(
        (got) => {
          const ctx = makeContext(
            this.coordinator,
            this.world,
            parseMeta(got.data, root).buckets,
            this.options,
            this.owned,
          );
          // An init begun meanwhile sets its own after this: its requests were issued after
          // this read, and the coordinator settles calls in the order they were issued.
          this.ctxNow = ctx;
          return ctx;
        },
        (err) => {
          this.ctxPromise = null;
          if (codeOf(err) === 'NO_NODE')
            throw new ZoottError(
              'WORLD_NOT_INITIALISED',
              `world ${this.world} is not initialised (no ${root}); call init first`,
              { path: root },
            );
          throw err;
        },
      );
    }
    return this.ctxPromise;
  }

  /**
   * The context when it has been read already, else `null` (then `context()` reads it).
   * @internal For the per-task paths, which then wait for no promise.
   */
  contextNow(): EngineContext | null {
    return this.ctxNow;
  }

  /**
   * Creates the world: its tree root, its node in every area (with the shared area nodes
   * they need) and the buckets. Idempotent, and safe when several processes call it at once
   * (every create tolerates NODE_EXISTS). A world that exists with another bucket count keeps
   * it; asking for a different one explicitly is INVALID_CONFIG. A node the world needs that
   * someone else made first, with an ACL that does not serve the world, fails it with a
   * `NamespaceError` (NO_AUTH) naming the node and what only its admins can do.
   */
  async init(): Promise<void> {
    const buckets = await initWorld(
      this.coordinator,
      this.world,
      this.options.buckets ?? DEFAULT_BUCKETS,
      this.options.buckets !== undefined,
    );
    const ctx = makeContext(this.coordinator, this.world, buckets, this.options, this.owned);
    this.ctxNow = ctx;
    this.ctxPromise = Promise.resolve(ctx);
  }

  /**
   * Queues a task, named: `queue({ name, type, data, parent, childName, priority, ... })`.
   * At the top level without `parent`, under the exact `{ key }`, or under every tree node
   * whose name and type match the pattern (`childName` names each child). One multi per
   * target: tree node + pending entry. Re-queue rules: docs/protocol.md.
   * Returns what was queued (an empty list when no parent matched).
   */
  queue<K extends TaskType<M>>(request: QueueRequest<M, K>): Promise<QueuedTask[]>;
  /**
   * Queues a task, positionally as in the original zoott: `queue(taskInfo, parent,
   * nameFunctor, options)`. Same meaning as the named form. `parent` is required here
   * (`null` for the top level): a call with one argument is the named form, so a mistake in
   * it is reported as that form's, not as a field `taskInfo` lacks.
   */
  queue<K extends TaskType<M>>(
    taskInfo: TaskInfo<M, K>,
    parent: QueueParent,
    nameFunctor?: NameFunctor | null,
    options?: QueueOptions,
  ): Promise<QueuedTask[]>;
  async queue(...args: unknown[]): Promise<QueuedTask[]> {
    const { taskInfo, parent, nameFunctor, options } = queueArguments(args);
    return this.queueTask(taskInfo, parent, nameFunctor, options);
  }

  private async queueTask(
    taskInfo: unknown,
    parent: QueueParent,
    nameFunctor: NameFunctor | null | undefined,
    options: QueueOptions | undefined,
  ): Promise<QueuedTask[]> {
    const ctx = await this.context();
    const info = validateTaskInfo(taskInfo, ctx.limits);
    const opts = resolveQueueOptions(ctx, options);
    let parents: { key: TaskKey; name: string }[];
    if (parent === null || parent === undefined) {
      parents = [];
    } else if ('key' in parent) {
      const key = validateKey(parent.key, ctx.limits);
      parents = [{ key, name: key[key.length - 1]! }];
    } else {
      const matcher = compileParentPattern(parent);
      const nameOnly = compileParentPattern({ name: parent.name });
      const nodes = await walkTree(ctx, [], (key) =>
        nameOnly.matches({ name: key[key.length - 1]!, type: '' }),
      );
      parents = nodes
        .filter((n) => n.type !== undefined && matcher.matches({ name: n.name, type: n.type }))
        .map((n) => ({ key: n.key, name: n.name }));
      if (parents.length === 0) return [];
    }
    if (parents.length === 0) return [await queueAt(ctx, [info.name], info, opts)];
    const names = childNamesFor(parents, info.name, nameFunctor ?? undefined, ctx.limits);
    return Promise.all(parents.map((p, i) => queueAt(ctx, [...p.key, names[i]!], info, opts)));
  }

  /**
   * Queues many tasks in few transactions: each request is the named form of `queue` without
   * a parent or under an exact `{ key }`. Every request is checked before anything is
   * written; tasks go in order, as many per multi as fit ZooKeeper's request size (a task's
   * tree node and entry always in the same one). Re-queues follow `queue`'s rules. Returns
   * one result per request, in order.
   */
  async queueMany<K extends TaskType<M>>(
    requests: readonly QueueManyRequest<M, K>[],
  ): Promise<QueuedTask[]> {
    return queueManyAt(await this.context(), requests);
  }

  /** A claimer with its own listing cache; `runWorker` uses one per worker. */
  async claimer(options: ClaimerOptions, onChange?: () => void): Promise<Claimer> {
    const claimer = new Claimer(await this.context(), options, this.held, onChange);
    this.claimers.add(claimer);
    return claimer;
  }

  /**
   * Claims the next runnable task over all buckets (an ephemeral working node holding the
   * worker identity), or returns `null`. Listings are cached and watched between calls.
   */
  async claim(options: Partial<ClaimerOptions> = {}): Promise<Claim<M> | null> {
    return (await this.claimMany(1, options))[0] ?? null;
  }

  /**
   * Claims up to `max` runnable tasks over all buckets, best first, in as few multis as
   * possible (group commit: one multi claims up to 32). A claim another worker wins is
   * skipped without costing the others theirs. Returns fewer (or none) when fewer are runnable.
   */
  async claimMany(max: number, options: Partial<ClaimerOptions> = {}): Promise<Claim<M>[]> {
    if (!Number.isInteger(max) || max < 1)
      throw new ZoottError('INVALID_CONFIG', `max ${String(max)}: must be an integer >= 1`, {
        field: 'max',
      });
    const ctx = await this.context();
    // One cached claimer per set of options; other options make a new one.
    const id = JSON.stringify(options, (_k, v) => (typeof v === 'function' ? String(v) : v));
    if (!this.defaultClaimer || this.defaultClaimerId !== id) {
      if (this.defaultClaimer) {
        this.defaultClaimer.close();
        this.claimers.delete(this.defaultClaimer);
      }
      this.defaultClaimer = new Claimer(
        ctx,
        { ...options, worker: options.worker ?? `engine-${this.world}` },
        this.held,
      );
      this.defaultClaimerId = id;
      this.defaultClaimer.setWatched(allBuckets(ctx));
      this.claimers.add(this.defaultClaimer);
    }
    // The claimer reads entries as stored; the task map types them for the caller.
    return (await this.defaultClaimer.claimBatch(allBuckets(ctx), max)) as Claim<M>[];
  }

  /**
   * Records the result: ONE multi, fenced on the claim's session and working node.
   * `options.extraOps` join that multi (e.g. a reply node), so they commit with the record
   * or not at all; if they make it fail, the task completes without them (`extras` in the
   * outcome tells which happened).
   */
  async complete<K extends TaskType<M>>(
    claim: Claim<M, K>,
    result?: TaskResult<M, K>,
    options?: CompleteOptions,
  ): Promise<CompleteOutcome> {
    const to = options?.handOff ? (this.defaultClaimer ?? undefined) : undefined;
    const { outcome, next } = await this.completeHandingOff(claim, result, options, to);
    // The caller's own object: the group commit shares one frozen outcome among completions.
    return next ? { ...outcome, next } : { ...outcome };
  }

  /**
   * `complete`, and with `claimer` (a worker's own) the claim of a child this completion
   * makes runnable in the same multi, when that claimer would take it next anyway (see
   * `hand-off.ts`): `next` is then that child's claim, for the slot the parent leaves.
   * @internal The worker's completion; a caller of `next` owns its claim.
   */
  async completeHandingOff<K extends TaskType<M>>(
    claim: Claim<M, K>,
    result?: TaskResult<M, K>,
    options?: CompleteOptions,
    claimer?: Claimer,
  ): Promise<{ outcome: CompleteOutcome; next: Claim | null }> {
    const fullClaim = claim as Claim;
    // Every completion passes here: no await (a promise and a turn each) for hooks not set.
    const hook = this.options.completionOps;
    const hookOps = hook ? ((await hook(fullClaim, result)) ?? []) : NO_OPS;
    const given = options?.extraOps ?? NO_OPS;
    // Most completions have neither: no arrays made for them.
    const extraOps =
      hookOps.length === 0 ? given : given.length === 0 ? hookOps : [...given, ...hookOps];
    // Every completion may join a group commit, extra ops and all. Without extra ops it may
    // carry a hand-off (a promise only while the child's read-ahead is out): an extra op
    // could fail its multi, and with it the child's claim.
    let handOff = extraOps.length === 0 ? (claimer?.handOff(fullClaim) ?? undefined) : undefined;
    if (handOff instanceof Promise) handOff = (await handOff.catch(() => null)) ?? undefined;
    const settling = this.settle(fullClaim, 'complete', (ctx) =>
      this.groupsOf(ctx).complete(fullClaim, result, handOff, options?.report, extraOps),
    );
    // A hand-off never sent (no context, say) is not claimed. Without one: no promise for it.
    const carried = handOff;
    const outcome = await (carried ? settling.finally(() => carried.settle(false)) : settling);
    const next = carried ? await carried.result : null;
    // Asked after the reply: the change events of everything committed before it are in.
    if (outcome.status === 'completed') {
      const looking = lookForChildren(
        this.ctxNow ?? (await this.context()),
        this.claimers,
        fullClaim,
      );
      if (looking) await looking;
    }
    if (this.options.onSettled) await this.told(fullClaim, outcome, { result });
    return { outcome, next };
  }

  /** The group commit of this engine's completions (one per context). */
  private groupsOf(ctx: EngineContext): CompletionGroups {
    if (this.groups?.ctx !== ctx)
      this.groups = {
        ctx,
        groups: new CompletionGroups(ctx, new CompletionListings(ctx, this.claimers)),
      };
    return this.groups.groups;
  }

  /**
   * Records a failed attempt: retry with backoff, or dead letter after the last attempt. A
   * permanent error ({@link PermanentError}, `isPermanent`) makes this attempt the last; the
   * entry keeps its configured `maxAttempts` for an operator retry.
   */
  async fail(claim: Claim<M>, error: unknown): Promise<SettleOutcome> {
    const fullClaim = claim as Claim;
    const last = isPermanent(error) ? { ...fullClaim, maxAttempts: fullClaim.attempt } : fullClaim;
    const outcome = await this.settle(fullClaim, 'fail', (ctx) => failClaim(ctx, last, error));
    await this.told(fullClaim, outcome, { error });
    return outcome;
  }

  /** Gives a claim back without counting the attempt (for a worker that stops early). */
  async release(claim: Claim<M>): Promise<SettleOutcome> {
    const fullClaim = claim as Claim;
    const outcome = await this.settle(fullClaim, 'release', async (ctx) => {
      const out = await releaseClaim(ctx, fullClaim);
      // Giving a claim back changes no listing, so no watch tells the claimers: tell them.
      this.touchAll(ctx, fullClaim);
      return out;
    });
    await this.told(fullClaim, outcome, {});
    return outcome;
  }

  /**
   * Forgets a claim that cannot be settled any more (its session is gone, so its working
   * node went with it; or the task was cancelled): this engine may claim the task again.
   * Settling does this itself. `onSettled` hears `dropped` with `reason`.
   */
  forget(claim: Claim<M>, reason: 'session lost' | 'cancelled' = 'session lost'): void {
    this.untrack(claim as Claim);
    // The claimers skip what they claimed until its entry changes; an unsettled claim may
    // still be theirs to take again (its working node, if this session's, they remove).
    if (this.ctxPromise)
      void this.ctxPromise.then((ctx) => this.touchAll(ctx, claim as Claim)).catch(() => {});
    void this.told(claim as Claim, { status: 'dropped', reason }, {});
  }

  /** Tells `onSettled`; what it throws is logged, the settle stands. */
  private told(claim: Claim, outcome: SettleOutcome, detail: SettleDetail): Promise<void> {
    return tellSettled(this.options, claim, outcome, detail);
  }

  /** This engine, and the process, no longer hold the claim. */
  private untrack(claim: Claim): void {
    this.held.delete(claim.key.join(KEY_SEPARATOR));
    claimsHeldThrough(this.coordinator).delete(claim.workingPath);
  }

  private touchAll(ctx: EngineContext, claim: Claim): void {
    const bucket = ctx.layout.bucketOf(claim.key);
    for (const claimer of this.claimers) claimer.touch(bucket);
  }

  private async settle<T extends SettleOutcome>(
    claim: Claim,
    op: 'complete' | 'fail' | 'release',
    run: (ctx: EngineContext) => Promise<T>,
  ): Promise<T> {
    const ctx = this.ctxNow ?? (await this.context());
    const telemetry = ctx.telemetry;
    let settled = false;
    try {
      const out = await (telemetry
        ? settleTraced(telemetry, this.world, claim, op, () => run(ctx))
        : run(ctx));
      settled = true;
      return out;
    } finally {
      this.untrack(claim);
      // Not settled (an unexpected error): let this engine's claimers see the task again.
      if (!settled) this.touchAll(ctx, claim);
    }
  }

  /** Operator retry of a failed (dead-lettered) task; TASK_STATE when it is not failed. */
  async retry(key: TaskKey): Promise<void> {
    await retryTask(await this.context(), key);
  }

  /** Cancels a task (and with `subtree` all its descendants); returns the keys removed. */
  async cancel(key: TaskKey, options: { subtree?: boolean } = {}): Promise<TaskKey[]> {
    return cancelTask(await this.context(), key, options.subtree === true);
  }

  /** Pauses the world, or one task type: workers claim none of it; running tasks finish. */
  async pause(options: { type?: string } = {}): Promise<PauseState> {
    return setPause(this.coordinator, (await this.context()).layout.root, {
      paused: true,
      ...options,
    });
  }

  /** Resumes what `pause` paused; resuming the whole world resumes every type too. */
  async resume(options: { type?: string } = {}): Promise<PauseState> {
    return setPause(this.coordinator, (await this.context()).layout.root, {
      paused: false,
      ...options,
    });
  }

  /** What is paused in this world now. */
  async pauseState(): Promise<PauseState> {
    return readPause(this.coordinator, (await this.context()).layout.root);
  }

  /** Counts per area. */
  async counts(): Promise<AreaCounts> {
    return countAreas(await this.context());
  }

  /** Tasks in a state (all states when omitted). */
  async list(state?: TaskStateName): Promise<ListedTask[]> {
    return listTasks(await this.context(), state);
  }

  /** The task tree (below `root` when given) with each node's state. */
  async tree(root?: TaskKey): Promise<TreeNode[]> {
    return taskTree(await this.context(), root);
  }

  /** One task's full record, or `null`. */
  async task(key: TaskKey): Promise<TaskRecord<M> | null> {
    return (await taskRecord(await this.context(), key)) as TaskRecord<M> | null;
  }

  /**
   * State changes of this world, built on watches: every transition of every task once, in
   * its order (docs/protocol.md, "Events"); ends when `signal` aborts or the loop breaks.
   * With `progress`, also a `progress` event whenever a working task reports. `onReady` is
   * called once the stream is live (started by the first `next()`): every change made after
   * it is reported.
   */
  events(
    options: { signal?: AbortSignal; progress?: boolean; onReady?: () => void } = {},
  ): AsyncIterable<EngineEvent> {
    return watchEvents(
      () => this.context(),
      options.signal,
      options.progress === true,
      options.onReady,
    );
  }

  /**
   * Waits for one task to end, queued by any process: `completed` (result typed by `type`),
   * `failed` for good (its error) or `cancelled`. One watch, no polling; see `waitForTask`.
   */
  async waitFor(task: TaskKey | { key: TaskKey }, options?: WaitForOptions): Promise<TaskEnd<M>> {
    const key = Array.isArray(task) ? task : (task as { key: TaskKey }).key;
    return (await waitForTask(await this.context(), key, options)) as TaskEnd<M>;
  }

  /** What a task reported with `ctx.progress` / `ctx.log` (its last run), or `null`. */
  async progress(key: TaskKey): Promise<TaskProgress | null> {
    return readProgress(await this.context(), key);
  }

  /** Stops the default claimer's watches from waking anything. */
  close(): void {
    for (const claimer of this.claimers) claimer.close();
    this.claimers.clear();
  }
}

function allBuckets(ctx: EngineContext): number[] {
  return Array.from({ length: ctx.layout.buckets }, (_, i) => i);
}

/**
 * The engine of one world over a coordinator. Give it your task map to type `queue`,
 * `claim`, `complete` and `task`: `createEngine<MyTasks>(zk, { world: 'files' })`.
 */
export function createEngine<M extends TaskMap<M> = AnyTasks>(
  coordinator: Coordinator,
  options: EngineOptions,
): Engine<M> {
  return new Engine<M>(coordinator, options);
}
