import {
  type Claim,
  type CompleteOptions,
  type CompleteOutcome,
  type Coordinator,
  Engine,
  type EngineLogger,
  type EngineOptions,
  isZoottError,
  type Op,
  type SettleOutcome,
} from '@zoott/core';
import { JOB_TYPE, RACE_TYPE } from './constants.js';
import { ensureReplyDir, publishResult, type ReplyAddress, replyOp, worldAcl } from './reply.js';

/**
 * An error that retrying cannot fix (an invalid job, a refused executable): the task goes
 * to the failed area at once instead of after `maxAttempts`. `ZoottError` INVALID_JOB counts
 * as permanent too.
 */
export class PermanentError extends Error {
  readonly permanent = true;
  readonly code: string;
  constructor(message: string, code = 'PERMANENT') {
    super(message);
    this.name = 'PermanentError';
    this.code = code;
  }
}

/** Whether a handler's error should dead-letter its task without further attempts. */
export function isPermanent(err: unknown): boolean {
  if (isZoottError(err, 'INVALID_JOB')) return true;
  return (
    typeof err === 'object' && err !== null && (err as { permanent?: unknown }).permanent === true
  );
}

/**
 * Called after every settle attempt made through the engine, for metrics and logs: with
 * the handler's error for a failed attempt. A claim given back (`release`, the worker is
 * stopping) or forgotten (`forget`, the session was lost) is reported as `dropped`.
 */
export type SettleListener = (claim: Claim, outcome: SettleOutcome, error?: unknown) => void;

/** Options of the job engine: the engine's own, plus a listener of settled tasks. */
export interface JobEngineOptions extends EngineOptions {
  onSettled?: SettleListener;
  /**
   * The world whose ACL replies are published under (default: this engine's world). The
   * engine of a race world publishes under its job world's ACL, the one `wait` checks.
   */
  replyWorld?: string;
}

/** A job result's reply, made ready before the completion multi. */
interface PreparedReply {
  address: ReplyAddress;
  /** The create op for the completion multi; `null` when it could not be prepared. */
  op: Op | null;
}

/** The reply address a job result names, or `null` when it names none. */
function replyAddressOf(result: unknown): ReplyAddress | null {
  if (typeof result !== 'object' || result === null) return null;
  const { exchange, routingkey } = result as { exchange?: unknown; routingkey?: unknown };
  if (typeof routingkey !== 'string') return null;
  return { routingkey, ...(typeof exchange === 'string' ? { exchange } : {}) };
}

/**
 * The engine as the worker uses it, with the two job-level steps the core engine leaves
 * open: a permanent error dead-letters at once (the claim is settled as its last attempt),
 * and a job's result is also published to the reply channel named by its
 * `exchange`/`routingkey`.
 *
 * The reply node is created in the SAME multi as the completed record (the reply
 * directory is made first), so a reply exists exactly when the completion does, once,
 * and a crash cannot separate them. When that multi fails because of the reply (record
 * and reply together exceed the request size limit, say), the task is completed without
 * it and the reply is then published on its own, as a best effort with a warning: the
 * completion is never given up for the reply, and a crash in that gap loses only the reply.
 */
export class JobEngine extends Engine {
  private readonly onSettled: SettleListener | undefined;
  private readonly log: EngineLogger | undefined;
  private readonly replyWorld: string;

  constructor(coordinator: Coordinator, options: JobEngineOptions) {
    const { onSettled, replyWorld, ...engineOptions } = options;
    super(coordinator, engineOptions);
    this.replyWorld = replyWorld ?? options.world;
    this.onSettled = onSettled;
    this.log = options.logger;
  }

  override async complete(
    claim: Claim,
    result?: unknown,
    options: CompleteOptions = {},
  ): Promise<CompleteOutcome> {
    const reply =
      claim.type === JOB_TYPE || claim.type === RACE_TYPE ? await this.prepareReply(result) : null;
    const extraOps = [...(options.extraOps ?? []), ...(reply?.op ? [reply.op] : [])];
    const outcome = await super.complete(claim, result, { ...options, extraOps });
    if (reply && outcome.status === 'completed') {
      const key = claim.key.join('|');
      // Applied with the completion (results are null when that attempt's reply was lost).
      if (reply.op && outcome.extras?.applied) {
        const published = outcome.extras.results?.at(-1);
        const path = published?.op === 'create' ? published.path : undefined;
        this.log?.debug?.({ key, path }, 'result published with the completion');
      } else await this.publishAfter(key, reply.address, result);
    }
    this.onSettled?.(claim, outcome);
    return outcome;
  }

  override async fail(claim: Claim, error: unknown): Promise<SettleOutcome> {
    // failClaim dead-letters a claim on its last attempt; a permanent error makes this one
    // the last. The entry keeps its configured maxAttempts for an operator retry.
    const settled = isPermanent(error) ? { ...claim, maxAttempts: claim.attempt } : claim;
    const outcome = await super.fail(settled, error);
    this.onSettled?.(claim, outcome, error);
    return outcome;
  }

  override async release(claim: Claim): Promise<SettleOutcome> {
    const outcome = await super.release(claim);
    this.onSettled?.(claim, outcome);
    return outcome;
  }

  override forget(claim: Claim): void {
    super.forget(claim);
    this.onSettled?.(claim, { status: 'dropped', reason: 'session lost' });
  }

  /**
   * The reply op for the completion multi, its directory created beforehand. A reply that
   * cannot be prepared (a bad address, say) gets no op: `publishAfter` tries it and warns.
   */
  private async prepareReply(result: unknown): Promise<PreparedReply | null> {
    const address = replyAddressOf(result);
    if (!address) return null;
    try {
      // Published with the world's ACL, and only into a reply path that carries it.
      const acl = await worldAcl(this.coordinator, this.replyWorld);
      return {
        address,
        op: replyOp(
          await ensureReplyDir(this.coordinator, address, acl, this.replyWorld),
          result,
          acl,
        ),
      };
    } catch {
      return { address, op: null };
    }
  }

  /** The fallback: publishes the reply after the completion, logging what went wrong. */
  private async publishAfter(key: string, address: ReplyAddress, result: unknown): Promise<void> {
    try {
      const path = await publishResult(this.coordinator, address, result, {
        world: this.replyWorld,
      });
      this.log?.warn({ key, path }, 'result published after the completion, not atomically');
    } catch (err) {
      this.log?.warn(
        { key, err: String(err) },
        'could not publish the result to the reply channel',
      );
    }
  }
}
