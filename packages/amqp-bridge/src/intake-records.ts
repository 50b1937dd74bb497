import type { Acl, Coordinator } from '@zoott/core';
import { isZoottError } from '@zoott/core';
import { decodeJson, encodeJson } from '@zoott/core/internal';

/**
 * How long a held record is waited for before a redelivery takes a task of its own. A bridge
 * that died holds its records until the server expires its session: up to ZooKeeper's
 * largest session timeout by default (20 ticks, 40 s), so a little longer than that.
 */
const ADOPT_WAIT_MS = 45_000;
/** A delivery count older than this is a leftover (a bridge died after a message settled). */
const COUNT_TTL_MS = 60 * 60 * 1000;

/**
 * An intake record: a message is being queued as `task`. It exists from before the task is
 * queued until just before the message is acknowledged, and `held` (an ephemeral node of the
 * bridge handling it) says that a live delivery is on it.
 */
export interface IntakeRecord {
  path: string;
  task: string;
  /** The record's version as this delivery holds it: an adoption by another bumps it. */
  version: number;
}

const HELD = '~held';
const COUNT = '~count';

/**
 * The intake records of one world: `<dir>/<fingerprint>.<task>` (persistent) and its `~held`
 * twin (ephemeral), for exactly-once queueing across a bridge that dies between queueing a
 * job and acknowledging its message; and `<dir>/<fingerprint>~count`, the deliveries of a
 * redelivered message on a queue that does not count them itself.
 *
 * - A first delivery (`redelivered` false) always opens a record of its own, with a new
 *   task: it is a new message, even when another with the same body came before.
 * - A redelivery first looks for a record of its fingerprint that no live delivery holds
 *   (the one its earlier delivery left when its bridge died) and, if it takes one (`adopt`),
 *   queues that record's task only if it is not queued yet.
 * - The record is removed before the message is acknowledged, never after: a record that
 *   outlived its message's acknowledgement could be taken by another message of the same
 *   body and swallow it. A bridge that dies between the removal and the acknowledgement
 *   leaves nothing, and the redelivery queues the job again: a duplicate in that instant,
 *   never a job lost.
 */
export class IntakeRecords {
  constructor(
    private readonly coordinatorOf: () => Coordinator,
    readonly dir: string,
    private readonly acl: () => readonly Acl[],
  ) {}

  /** Opens a record for `task`, held by this session. */
  async open(fingerprint: string, task: string): Promise<IntakeRecord> {
    const path = `${this.dir}/${fingerprint}.${task}`;
    const acl = this.acl();
    try {
      await this.coordinatorOf().multi([
        { op: 'create', path, data: encodeJson({ task }), acl },
        { op: 'create', path: path + HELD, ephemeral: true, acl },
      ]);
    } catch (err) {
      // The task name is new: a record already there is this call's own, written by an
      // attempt whose reply was lost.
      if (!isZoottError(err, 'NODE_EXISTS')) throw err;
    }
    return { path, task, version: 0 };
  }

  /**
   * Removes a record this delivery holds. `false` when another delivery adopted it
   * meanwhile (this session was lost, so its hold went): that delivery counts the task as
   * its own, and the caller must queue one of its own.
   */
  async close(record: IntakeRecord): Promise<boolean> {
    const coordinator = this.coordinatorOf();
    try {
      await coordinator.multi([
        { op: 'delete', path: record.path, version: record.version },
        { op: 'delete', path: record.path + HELD },
      ]);
      return true;
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE') && !isZoottError(err, 'BAD_VERSION')) throw err;
    }
    // The hold went with a lost session; the record is still this delivery's if its version
    // did not move.
    try {
      await coordinator.delete(record.path, record.version);
      return true;
    } catch (err) {
      if (isZoottError(err, 'NO_NODE') || isZoottError(err, 'BAD_VERSION')) return false;
      throw err;
    }
  }

  /**
   * Gives a record up without removing it (this delivery's channel closed: the message is
   * redelivered, and that delivery adopts the record). Only while the record is still this
   * delivery's: a hold an adopter made is not touched.
   */
  async release(record: IntakeRecord): Promise<void> {
    await this.coordinatorOf()
      .multi([
        { op: 'check', path: record.path, version: record.version },
        { op: 'delete', path: record.path + HELD },
      ])
      .catch(() => undefined);
  }

  /**
   * For a redelivery: takes the record an earlier delivery of this message left, or `null`
   * when there is none. Records held by live deliveries are those of other messages with the
   * same body (or of an earlier delivery whose bridge has not yet seen its channel close):
   * they are waited for, up to a deadline, until they are removed or let go.
   */
  async adopt(fingerprint: string, stillWanted: () => boolean): Promise<IntakeRecord | null> {
    const coordinator = this.coordinatorOf();
    const deadline = Date.now() + ADOPT_WAIT_MS;
    const prefix = `${fingerprint}.`;
    for (;;) {
      let wake!: () => void;
      const changed = new Promise<void>((resolve) => {
        wake = resolve;
      });
      const names = await coordinator.children(this.dir);
      const records = names.filter((n) => n.startsWith(prefix) && !n.endsWith(HELD));
      let waiting = false;
      for (const name of records) {
        const path = `${this.dir}/${name}`;
        const taken = await this.tryHold(coordinator, path);
        if (taken) return taken;
        // Held by a live delivery: wait for it to finish or let go.
        if ((await coordinator.exists(path + HELD, { watch: wake })) !== null) waiting = true;
      }
      if (!waiting || Date.now() >= deadline || !stillWanted()) return null;
      await Promise.race([
        changed,
        new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref()),
      ]);
    }
  }

  /** Holds the record at `path` when nobody does: one multi, so of two adopters one wins. */
  private async tryHold(coordinator: Coordinator, path: string): Promise<IntakeRecord | null> {
    let got: Awaited<ReturnType<Coordinator['get']>>;
    try {
      got = await coordinator.get(path);
    } catch (err) {
      if (isZoottError(err, 'NO_NODE')) return null;
      throw err;
    }
    const data = decodeJson<{ task?: unknown }>(got.data, path);
    if (typeof data?.task !== 'string') return null;
    const acl = this.acl();
    try {
      const [, set] = await coordinator.multi([
        { op: 'create', path: path + HELD, ephemeral: true, acl },
        { op: 'set', path, data: got.data, version: got.stat.version },
      ]);
      const version = set?.op === 'set' ? set.stat.version : got.stat.version + 1;
      return { path, task: data.task, version };
    } catch (err) {
      if (isZoottError(err, 'NODE_EXISTS') || isZoottError(err, 'NO_NODE')) return null;
      if (isZoottError(err, 'BAD_VERSION')) return null;
      throw err;
    }
  }

  /**
   * Counts one more delivery of a redelivered message whose queue does not count them
   * (classic queues) and returns which delivery this is: 2 for the first redelivery (the
   * first delivery is not counted: nothing is written for it). Shared by identical posts,
   * and forgotten an hour after its last delivery.
   */
  async countDelivery(fingerprint: string): Promise<number> {
    const coordinator = this.coordinatorOf();
    const path = `${this.dir}/${fingerprint}${COUNT}`;
    for (;;) {
      try {
        const got = await coordinator.get(path);
        const data = decodeJson<{ deliveries?: unknown; at?: unknown }>(got.data, path);
        const fresh = typeof data?.at === 'number' && Date.now() - data.at < COUNT_TTL_MS;
        const before = fresh && typeof data?.deliveries === 'number' ? data.deliveries : 1;
        const count = before + 1;
        await coordinator.set(
          path,
          encodeJson({ deliveries: count, at: Date.now() }),
          got.stat.version,
        );
        return count;
      } catch (err) {
        if (isZoottError(err, 'BAD_VERSION')) continue;
        if (!isZoottError(err, 'NO_NODE')) throw err;
      }
      try {
        await coordinator.create(path, encodeJson({ deliveries: 2, at: Date.now() }), {
          acl: this.acl(),
        });
        return 2;
      } catch (err) {
        if (!isZoottError(err, 'NODE_EXISTS')) throw err;
      }
    }
  }

  /** Forgets the delivery count of a message that settled. */
  async clearCount(fingerprint: string): Promise<void> {
    await this.coordinatorOf()
      .delete(`${this.dir}/${fingerprint}${COUNT}`)
      .catch(() => undefined);
  }
}
