import { randomBytes } from 'node:crypto';
import type { Acl } from '../../contract/acl.js';
import type { Coordinator, SessionEvent } from '../../contract/coordinator.js';
import { isZoottError, ZoottError } from '../../contract/errors.js';
import { decodeJson, encodeJson } from '../../contract/paths.js';
import { lockId } from '../lock-id/lock-id.js';
import { Deadline, ONE_YEAR_MS, timeoutOrDefault, waitForSignal } from '../support/deadline.js';
import { ensurePath } from '../support/ensure-path.js';
import { Signal } from '../support/signal.js';
import { WaitTimeout } from '../waits/wait-timeout.js';
import { CANDIDATE_PREFIX, candidateOrder, predecessorOf, sameSessionBack } from './candidates.js';

/** Why a leadership ended: the session ended, the node was deleted by someone else, or `withdraw()`. */
export type LeadershipLostReason = 'session' | 'node' | 'withdrawn';

/** Options of a `LeaderElection`. */
export interface LeaderElectionOptions {
  /** Who this candidate is (shown by `contenders()`); defaults to a `lockId()`. */
  identifier?: string;
  /** ACL of the candidate node; defaults to the coordinator's default ACL. */
  acl?: readonly Acl[];
  /** Default wait of `lead()` in milliseconds; missing means a long time (one year). */
  timeoutMs?: number;
}

/** What `lead()` resolves to: the leadership, and the signal that says when it ends. */
export interface Leadership {
  /** Path of the candidate node that leads. */
  readonly node: string;
  /**
   * Aborted when the leadership ends; `signal.reason` is a ZoottError (`SESSION_EXPIRED`
   * for a lost session, `NO_NODE` for a deleted node, `ABORTED` for `withdraw()`).
   */
  readonly signal: AbortSignal;
  /** Why it ended, `null` while it lasts. */
  readonly lost: LeadershipLostReason | null;
}

class HeldLeadership implements Leadership {
  private readonly controller = new AbortController();
  lost: LeadershipLostReason | null = null;

  constructor(readonly node: string) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  end(reason: LeadershipLostReason): void {
    if (this.lost !== null) return;
    this.lost = reason;
    const error =
      reason === 'session'
        ? new ZoottError('SESSION_EXPIRED', 'leadership lost: the session ended', {
            path: this.node,
          })
        : reason === 'node'
          ? new ZoottError('NO_NODE', 'leadership lost: the candidate node was deleted', {
              path: this.node,
            })
          : new ZoottError('ABORTED', 'leadership given up', { path: this.node });
    this.controller.abort(error);
  }
}

/**
 * Leader election (Curator's LeaderLatch, kazoo's Election): every candidate creates an
 * ephemeral sequential node under `path`; the one with the lowest sequence leads. Each other
 * candidate watches only the node just before its own (no herd: a leader leaving wakes one
 * candidate), and re-checks when that node goes. The leader is told when its leadership
 * ends (session lost, node deleted) through `Leadership.signal`.
 *
 * ```ts
 * const election = new LeaderElection(zk, '/election/scheduler', { identifier: 'w-1' });
 * const leadership = await election.lead();
 * await doLeaderWork(leadership.signal); // stop when the signal aborts
 * await election.withdraw();
 * ```
 */
export class LeaderElection {
  readonly path: string;
  readonly identifier: string;
  readonly timeoutMs: number;
  private readonly acl: readonly Acl[] | undefined;
  /** Name of this candidate's node under `path`, `null` while not a candidate. */
  private node: string | null = null;
  private leadership: HeldLeadership | null = null;
  /** Fired on every session change, so a waiting `lead()` looks again. */
  private changed = new Signal();
  /** Increases on `withdraw()`: a `lead()` begun before it gives up. */
  private epoch = 0;
  /** Increases on every read of the own node, so a stale watch cannot end a leadership. */
  private ownWatch = 0;
  private readonly offSession: () => void;

  constructor(
    private readonly zk: Coordinator,
    path: string,
    options: LeaderElectionOptions = {},
  ) {
    if (!path.startsWith('/') || path.length < 2 || path.endsWith('/')) {
      throw new ZoottError(
        'INVALID_PATH',
        `election path ${JSON.stringify(path)}: an absolute path, not the root`,
        { path },
      );
    }
    this.path = path;
    this.identifier = options.identifier ?? lockId();
    this.acl = options.acl;
    this.timeoutMs = timeoutOrDefault(options.timeoutMs, ONE_YEAR_MS);
    this.offSession = zk.onSession((e) => this.onSession(e));
  }

  /** Whether this candidate leads, as far as it knows. */
  get isLeader(): boolean {
    return this.leadership !== null && this.leadership.lost === null;
  }

  /**
   * Enters the election (once) and waits until this candidate leads. Resolves to the
   * leadership; resolves at once when it already leads.
   *
   * @throws WaitTimeout (WAIT_TIMEOUT) when `timeoutMs` passes first (the candidate withdraws);
   *   ABORTED when `signal` aborts or `withdraw()` is called meanwhile; SESSION_EXPIRED when
   *   the session ends while waiting (call again once a new session is open).
   */
  async lead(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Leadership> {
    if (this.leadership && this.leadership.lost === null) return this.leadership;
    const timeoutMs = timeoutOrDefault(options.timeoutMs, this.timeoutMs);
    const deadline = new Deadline(timeoutMs);
    const epoch = this.epoch;
    const abort = () => this.changed.fire();
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      for (;;) {
        if (epoch !== this.epoch) throw this.withdrawnMeanwhile();
        if (options.signal?.aborted) {
          await this.withdraw();
          throw new ZoottError('ABORTED', 'stopped waiting for leadership', { path: this.path });
        }
        const wake = new Signal();
        this.changed = wake;
        const predecessor = await this.look(wake, epoch);
        if (predecessor === null) return this.becomeLeader();
        if (!(await waitForSignal(wake, deadline))) {
          await this.withdraw();
          throw new WaitTimeout(`not elected within ${timeoutMs} ms under ${this.path}`, {
            path: this.path,
          });
        }
      }
    } finally {
      options.signal?.removeEventListener('abort', abort);
    }
  }

  /**
   * kazoo's `Election.run`: leads, runs `fn` with a signal that aborts when the leadership
   * ends, and withdraws when `fn` settles (its result or error is passed on).
   */
  async run<T>(
    fn: (signal: AbortSignal) => T | Promise<T>,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<T> {
    const leadership = await this.lead(options);
    try {
      return await fn(leadership.signal);
    } finally {
      await this.withdraw();
    }
  }

  /** Identifiers of the candidates in election order: the leader first. */
  contenders(): Promise<string[]> {
    return electionContenders(this.zk, this.path);
  }

  /**
   * Leaves the election: deletes the candidate node (if the session still has it) and ends a
   * leadership with reason `withdrawn`. A `lead()` waiting meanwhile fails with ABORTED.
   * Calling `lead()` again enters anew.
   */
  async withdraw(): Promise<void> {
    this.epoch += 1;
    const node = this.node;
    this.node = null;
    this.leadership?.end('withdrawn');
    this.leadership = null;
    this.changed.fire();
    if (node === null || this.zk.state === 'lost' || this.zk.state === 'closed') return;
    try {
      await this.zk.delete(`${this.path}/${node}`);
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE') && !isZoottError(err, 'SESSION_EXPIRED')) throw err;
    }
  }

  /** Withdraws and stops listening to the session. The coordinator stays open. */
  async close(): Promise<void> {
    try {
      await this.withdraw();
    } finally {
      this.offSession();
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  toString(): string {
    return `LeaderElection(${this.path} id=${this.identifier} node=${this.node ?? '-'} leader=${this.isLeader})`;
  }

  private onSession(event: SessionEvent): void {
    if (event.type === 'lost' || event.type === 'closed') {
      // The ephemeral candidate node goes with the session: no longer a candidate.
      this.node = null;
      this.leadership?.end('session');
      this.leadership = null;
    }
    this.changed.fire();
  }

  /**
   * Makes sure this candidate has a node, lists the candidates and returns the predecessor
   * (after arming a watch on it that fires `wake`), or `null` when this candidate is first.
   */
  private async look(wake: Signal, epoch: number): Promise<string | null> {
    for (;;) {
      if (epoch !== this.epoch) throw this.withdrawnMeanwhile();
      const mine = this.node ?? (await this.enter(epoch));
      const ordered = candidateOrder(await this.zk.children(this.path));
      if (!ordered.includes(mine)) {
        // Deleted by someone else (or gone with a session): enter again.
        if (this.node === mine) this.node = null;
        continue;
      }
      const predecessor = predecessorOf(ordered, mine);
      if (predecessor === null) return null;
      // Only the node just before ours: when the leader goes, one candidate wakes, not all.
      const stat = await this.zk.exists(`${this.path}/${predecessor}`, {
        watch: () => wake.fire(),
      });
      if (stat !== null) return predecessor;
    }
  }

  /**
   * Creates this candidate's node. The name carries a tag unique to this attempt: after a
   * create whose reply was lost the candidate lists the election and adopts the node its
   * lost attempt made, so no ghost candidate of its own blocks it (or anyone) later.
   */
  private async enter(epoch: number): Promise<string> {
    const tag = randomBytes(6).toString('hex');
    const prefix = `${CANDIDATE_PREFIX}${tag}-`;
    const data = encodeJson({ id: this.identifier });
    const options = { ephemeral: true, sequential: true, ...(this.acl ? { acl: this.acl } : {}) };
    let madeParents = false;
    for (;;) {
      const session = this.zk.sessionId;
      try {
        const created = await this.zk.create(`${this.path}/${prefix}`, data, options);
        return this.adopt(created.slice(created.lastIndexOf('/') + 1), epoch);
      } catch (err) {
        if (isZoottError(err, 'NO_NODE') && !madeParents) {
          madeParents = true;
          await ensurePath(this.zk, this.path);
          continue;
        }
        if (!isZoottError(err, 'CONNECTION_LOSS') && !isZoottError(err, 'OPERATION_TIMEOUT'))
          throw err;
        // Outcome unknown: once the same session is back, our node is there or it is not.
        if (session === null || !(await sameSessionBack(this.zk, session))) {
          throw new ZoottError('SESSION_EXPIRED', 'session ended while entering the election', {
            path: this.path,
            cause: err,
          });
        }
        const made = (await this.zk.children(this.path)).find((n) => n.startsWith(prefix));
        if (made !== undefined) return this.adopt(made, epoch);
      }
    }
  }

  /** Records `name` as this candidate's node, unless a withdrawal came meanwhile. */
  private async adopt(name: string, epoch: number): Promise<string> {
    if (epoch !== this.epoch) {
      await this.zk.delete(`${this.path}/${name}`).catch(() => undefined);
      throw this.withdrawnMeanwhile();
    }
    this.node = name;
    return name;
  }

  private withdrawnMeanwhile(): ZoottError {
    return new ZoottError('ABORTED', 'withdrawn while waiting for leadership', {
      path: this.path,
    });
  }

  private becomeLeader(): Leadership {
    const node = this.node!;
    const held = new HeldLeadership(`${this.path}/${node}`);
    this.leadership = held;
    this.watchOwn(held);
    return held;
  }

  /** Ends the leadership when someone else deletes the leader's node. */
  private watchOwn(held: HeldLeadership): void {
    this.ownWatch += 1;
    const generation = this.ownWatch;
    this.zk
      .exists(held.node, {
        watch: (event) => {
          if (generation !== this.ownWatch || held.lost !== null) return;
          if (event.type === 'deleted') {
            if (this.leadership === held) {
              this.leadership = null;
              this.node = null;
            }
            held.end('node');
            this.changed.fire();
          } else this.watchOwn(held);
        },
      })
      .then(
        (stat) => {
          if (stat === null && held.lost === null && this.leadership === held) {
            this.leadership = null;
            this.node = null;
            held.end('node');
          }
        },
        () => undefined, // a lost session ends the leadership through onSession
      );
  }
}

/**
 * Identifiers of the candidates of the election at `path`, leader first, read without
 * entering it (for status displays). Empty when nobody stands.
 */
export async function electionContenders(zk: Coordinator, path: string): Promise<string[]> {
  let names: string[];
  try {
    names = candidateOrder(await zk.children(path));
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) return [];
    throw err;
  }
  const ids = await Promise.all(
    names.map(async (name) => {
      try {
        const { data } = await zk.get(`${path}/${name}`);
        return decodeJson<{ id?: unknown }>(data, `${path}/${name}`).id;
      } catch {
        return undefined; // gone meanwhile, or not a candidate's data
      }
    }),
  );
  return ids.filter((id): id is string => typeof id === 'string');
}
