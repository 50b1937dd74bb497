import type { Op } from '../contract/coordinator.js';
import { JUTE_MAX_BUFFER } from '../contract/request-size.js';
import type { HandOff } from './carried-claim.js';
import type { EngineContext } from './context.js';
import { codeOf, UNKNOWN_OUTCOME_CODES } from './errors.js';
import { multiFrameBytes } from './multi-frame.js';
import { sessionBack } from './session.js';
import {
  type CompleteOutcome,
  completeAlone,
  completedRecordBytes,
  completeWithExtras,
  completionOps,
  failClaim,
} from './settle.js';
import type { Claim, TaskProgress } from './types.js';

/** The outcome of most completions: one object, not one per completion. */
const COMPLETED: CompleteOutcome = Object.freeze({ status: 'completed' });

/** Most completions in one multi. */
export const MAX_COMPLETE_GROUP = 64;

/**
 * Request bytes one group commit aims to stay under: half of ZooKeeper's request limit, so a
 * chroot in front of every path (the engine does not know it) still fits with room to spare.
 */
export const GROUP_FRAME_BUDGET = Math.floor(JUTE_MAX_BUFFER / 2);

/**
 * Told of every completion the group commit sends: before it goes out, and once it has
 * settled (`applied`: the entry is gone by it), before its caller hears the outcome. The
 * claim path keeps its listings true to it (see `CompletionListings`); one object per
 * context, so a completion costs no closure or promise for it.
 */
export interface OwnCompletions {
  sending(claim: Claim): void;
  settled(claim: Claim, applied: boolean): void;
}

interface Waiting {
  claim: Claim;
  record: Uint8Array;
  /** The completion's own ops, then `extra`, then the hand-off's. */
  ops: Op[];
  own: number;
  /** The caller's extra ops (a job's reply, the progress node's delete). */
  extra: readonly Op[];
  bytes: number;
  /** A child's claim that rides in the same multi (see `hand-off.ts`). */
  handOff: HandOff | undefined;
  resolve(out: CompleteOutcome): void;
  reject(err: unknown): void;
}

/**
 * Group commit of completions. A completion that finds no completion multi in flight goes out
 * at once, alone: a lone task waits for no timer. Completions that arrive while one is in
 * flight wait for it to end and then go out together, in ONE multi (up to
 * {@link MAX_COMPLETE_GROUP} and {@link GROUP_FRAME_BUDGET}): natural batching, so the
 * busier the worker, the bigger the groups, and the wait is never longer than one transaction.
 *
 * A multi is all or nothing. So when a group is refused (one stale claim in it: cancelled,
 * re-claimed; or an extra op of one of them), every completion of it is tried again alone:
 * the stale one is dropped as before, one whose extras failed completes without them, its
 * neighbours complete. When a group's reply is lost, each is re-issued alone as a lost write:
 * applied now, or refused because the group applied (the own record then says so).
 */
export class CompletionGroups {
  private readonly waiting: Waiting[] = [];
  private inFlight = false;

  constructor(
    private readonly ctx: EngineContext,
    private readonly own?: OwnCompletions,
  ) {}

  /**
   * Completes `claim` with `result`, in a group when others are waiting too, with `handOff`'s
   * claim in the same multi when it can be. `handOff` is settled on every path. `report` is
   * the run's last progress, kept in the record (a run whose progress node was never written
   * has one too, and nothing to remove). `extra` ops go in the same multi as the completion;
   * the outcome then says what became of them (see `completeWithExtras`).
   */
  complete(
    claim: Claim,
    result: unknown,
    handOff?: HandOff,
    report?: TaskProgress,
    extra: readonly Op[] = [],
  ): Promise<CompleteOutcome> {
    // One reading of the clock for the parent's completion and the child's start it commits.
    const record = completedRecordBytes(this.ctx, claim, result, report, handOff?.at);
    this.own?.sending(claim);
    if (!(record instanceof Uint8Array)) {
      handOff?.settle(false);
      return this.failed(claim, failClaim(this.ctx, claim, record));
    }
    const own = completionOps(this.ctx, claim, record);
    const ops = handOff || extra.length > 0 ? [...own, ...extra, ...(handOff?.ops ?? [])] : own;
    const bytes = multiFrameBytes(ops);
    return new Promise((resolve, reject) => {
      const waiter = {
        claim,
        record,
        ops,
        own: own.length,
        extra,
        bytes,
        handOff,
        resolve,
        reject,
      };
      this.waiting.push(waiter);
      if (!this.inFlight) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.inFlight = true;
    try {
      while (this.waiting.length > 0) {
        const group = this.take();
        // Every waiter hears back, whatever happens: an unexpected error is theirs too.
        await this.commit(group).catch((err: unknown) => {
          for (const waiter of group) {
            // Settled already where the commit got that far; else its fate is unknown.
            waiter.handOff?.settle('unknown');
            this.rejected(waiter, err);
          }
        });
      }
    } finally {
      this.inFlight = false;
    }
  }

  /** The next group: the oldest waiting completions that fit the bounds (always at least one). */
  private take(): Waiting[] {
    let bytes = 0;
    let count = 0;
    while (count < this.waiting.length && count < MAX_COMPLETE_GROUP) {
      const next = this.waiting[count]!.bytes;
      if (count > 0 && bytes + next > GROUP_FRAME_BUDGET) break;
      bytes += next;
      count++;
    }
    return this.waiting.splice(0, count);
  }

  private async commit(group: Waiting[]): Promise<void> {
    const session = this.ctx.coordinator.sessionId;
    // Alone, or fenced locally (another session): the single path says all there is to say.
    const together = group.filter((w) => w.claim.session === session);
    const alone = group.filter((w) => w.claim.session !== session);
    if (together.length === 1 && !together[0]!.handOff) alone.push(together.pop()!);
    const singles = alone.map((waiter) => {
      waiter.handOff?.settle(false);
      return this.settle(waiter, this.completeAlone(waiter, false));
    });
    if (together.length > 0) await this.commitTogether(together, session!);
    await Promise.all(singles);
  }

  private async commitTogether(group: Waiting[], session: string): Promise<void> {
    let lost = false;
    try {
      const results = await this.ctx.coordinator.multi(group.flatMap((w) => w.ops));
      let at = 0;
      for (const waiter of group) {
        waiter.handOff?.settle(true);
        const from = at + waiter.own;
        at += waiter.ops.length;
        if (waiter.extra.length === 0) this.resolved(waiter, COMPLETED);
        else {
          const extras = {
            applied: true as const,
            results: results.slice(from, from + waiter.extra.length),
          };
          this.resolved(waiter, { status: 'completed', extras });
        }
      }
      return;
    } catch (err) {
      lost = UNKNOWN_OUTCOME_CODES.has(codeOf(err) ?? '');
      this.ctx.logger.info?.(
        { completions: group.length, error: String(err) },
        'group commit refused: completing one by one',
      );
    }
    // The lost group may or may not have applied: wait for the session, then ask per claim.
    if (lost) await sessionBack(this.ctx.coordinator, session);
    // Settled before the completions answer (their callers count on it). A refused group
    // applied nothing; a lost one is looked up: a child it claimed is this session's.
    for (const waiter of group) waiter.handOff?.settle(lost ? 'unknown' : false);
    await Promise.all(group.map((w) => this.settle(w, this.completeAlone(w, lost))));
  }

  /** `w` in a multi of its own (after a group's lost reply: `lost`), extras and all. */
  private completeAlone(waiter: Waiting, lost: boolean): Promise<CompleteOutcome> {
    return waiter.extra.length > 0
      ? completeWithExtras(this.ctx, waiter.claim, waiter.record, waiter.extra, lost)
      : completeAlone(this.ctx, waiter.claim, waiter.record, lost);
  }

  private async settle(waiter: Waiting, out: Promise<CompleteOutcome>): Promise<void> {
    try {
      this.resolved(waiter, await out);
    } catch (err) {
      this.rejected(waiter, err);
    }
  }

  /** `waiter`'s outcome: the claim path hears of it first, then its caller. */
  private resolved(waiter: Waiting, out: CompleteOutcome): void {
    this.own?.settled(waiter.claim, out.status === 'completed');
    waiter.resolve(out);
  }

  /**
   * `waiter` failed, or a group's error reached it after it was told (then the claim path
   * hears of it again, as not applied: a mark already ended is not ended twice).
   */
  private rejected(waiter: Waiting, err: unknown): void {
    this.own?.settled(waiter.claim, false);
    waiter.reject(err);
  }

  /** A completion that became a failure before it was sent (its record cannot be written). */
  private async failed(claim: Claim, out: Promise<CompleteOutcome>): Promise<CompleteOutcome> {
    let applied = false;
    try {
      const outcome = await out;
      applied = outcome.status === 'completed';
      return outcome;
    } finally {
      this.own?.settled(claim, applied);
    }
  }
}
