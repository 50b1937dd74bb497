import {
  type Claim,
  type CompleteOutcome,
  type Coordinator,
  Engine,
  type EngineOptions,
} from '@zoott/core';
import { raceErrorResult, regularErrorResult } from '@zoott/core/jobs';
import { JOB_TYPE, RACE_TYPE } from './constants.js';
import { prepareReply, publishResult, type ReplyAddress, replyOp } from './reply.js';

/** Options of {@link createJobEngine}: the engine's own, plus where replies are published. */
export interface JobEngineOptions extends EngineOptions {
  /**
   * The world whose ACL replies are published under (default: this engine's world). The
   * engine of a race world publishes under its job world's ACL, the one `wait` checks.
   */
  replyWorld?: string;
}

/** The reply address a job result names, or `null` when it names none. */
function replyAddressOf(result: unknown): ReplyAddress | null {
  if (typeof result !== 'object' || result === null) return null;
  const { exchange, routingkey } = result as { exchange?: unknown; routingkey?: unknown };
  if (typeof routingkey !== 'string') return null;
  return { routingkey, ...(typeof exchange === 'string' ? { exchange } : {}) };
}

/** The message of a failure, for the `error` of an error result. */
function failureText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error)
    return String((error as { message: unknown }).message);
  return String(error);
}

/**
 * The engine as the job layer uses it: the core engine whose completions of a job (or race)
 * also publish its result to the reply channel named by its `exchange`/`routingkey`. A job
 * that fails for good (an executable outside the allow-list, an invalid job, its attempts
 * spent) publishes an error result there instead (`error` says why, no `exit`): a consumer
 * waiting on the reply channel is answered either way.
 *
 * The reply node is created in the SAME multi as the completed record (the reply
 * directory is made first), so a reply exists exactly when the completion does, once,
 * and a crash cannot separate them. When that multi fails because of the reply (record
 * and reply together exceed the request size limit, say), the task is completed without
 * it and the reply is then published on its own, as a best effort with a warning: the
 * completion is never given up for the reply, and a crash in that gap loses only the reply.
 * `onSettled` is told after that.
 */
export function createJobEngine(coordinator: Coordinator, options: JobEngineOptions): Engine {
  const { onSettled, replyWorld: given, ...engineOptions } = options;
  const replyWorld = given ?? options.world;
  const log = options.logger;
  const isJob = (claim: Claim) => claim.type === JOB_TYPE || claim.type === RACE_TYPE;
  return new Engine(coordinator, {
    ...engineOptions,
    // A reply that cannot be prepared (a bad address, say) gets no op: the fallback below
    // tries it after the completion and warns.
    completionOps: async (claim, result) => {
      const address = isJob(claim) ? replyAddressOf(result) : null;
      if (!address) return [];
      try {
        // Published with the world's ACL, and only into a reply path that carries it. The
        // directory names its world: that world's reaper removes unconsumed results.
        const { dir, acl } = await prepareReply(coordinator, address, replyWorld);
        return [replyOp(dir, result, acl)];
      } catch {
        return [];
      }
    },
    onSettled: async (claim, outcome, detail) => {
      const address = isJob(claim) ? replyAddressOf(detail.result) : null;
      if (address && outcome.status === 'completed') {
        const extras = (outcome as CompleteOutcome).extras;
        const key = claim.key.join('|');
        // Applied with the completion (results are null when that attempt's reply was lost).
        if (extras?.applied) {
          const published = extras.results?.at(-1);
          const path = published?.op === 'create' ? published.path : undefined;
          log?.debug?.({ key, path }, 'result published with the completion');
        } else await publishAfter(key, address, detail.result);
      }
      // Failed for good: answered with an error result, published after the failed record
      // (best effort, as the fallback above: a crash in between loses only the answer).
      const named = isJob(claim) ? replyAddressOf(claim.data) : null;
      if (named && outcome.status === 'failed') {
        const refusal = { error: failureText(detail.error), server: claim.worker };
        const answer =
          claim.type === RACE_TYPE
            ? raceErrorResult(claim.data, refusal)
            : regularErrorResult(claim.data, refusal);
        await publishAfter(claim.key.join('|'), named, answer, 'error result published');
      }
      await onSettled?.(claim, outcome, detail);
    },
  });

  /** The fallback: publishes the reply after the completion, logging what went wrong. */
  async function publishAfter(
    key: string,
    address: ReplyAddress,
    result: unknown,
    done?: string,
  ): Promise<void> {
    try {
      const path = await publishResult(coordinator, address, result, { world: replyWorld });
      if (done) log?.info?.({ key, path }, done);
      else log?.warn({ key, path }, 'result published after the completion, not atomically');
    } catch (err) {
      log?.warn({ key, err: String(err) }, 'could not publish the result to the reply channel');
    }
  }
}
