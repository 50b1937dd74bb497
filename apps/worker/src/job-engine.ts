import {
  type Claim,
  type Coordinator,
  Engine,
  type EngineLogger,
  type EngineOptions,
  isZoottError,
  type SettleOutcome,
} from '@zoott/core';
import { JOB_TYPE, RACE_TYPE } from './constants.js';
import { publishResult } from './reply.js';

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

/** Called after every settle attempt made through the engine, for metrics and logs. */
export type SettleListener = (claim: Claim, outcome: SettleOutcome) => void;

export interface JobEngineOptions extends EngineOptions {
  onSettled?: SettleListener;
}

/**
 * The engine as the worker uses it, with the two job-level steps the core engine leaves
 * open: a permanent error dead-letters at once (the claim is settled as its last attempt),
 * and once a job's result is recorded it is also published to the reply channel named by
 * its `exchange`/`routingkey`. The reply is written after the completed record, so it
 * exists at most once per completion; a crash between the two loses the reply, never the
 * record.
 */
export class JobEngine extends Engine {
  private readonly onSettled: SettleListener | undefined;
  private readonly log: EngineLogger | undefined;

  constructor(coordinator: Coordinator, options: JobEngineOptions) {
    const { onSettled, ...engineOptions } = options;
    super(coordinator, engineOptions);
    this.onSettled = onSettled;
    this.log = options.logger;
  }

  override async complete(claim: Claim, result?: unknown): Promise<SettleOutcome> {
    const outcome = await super.complete(claim, result);
    if (outcome.status === 'completed' && (claim.type === JOB_TYPE || claim.type === RACE_TYPE))
      await this.reply(claim, result);
    this.onSettled?.(claim, outcome);
    return outcome;
  }

  override async fail(claim: Claim, error: unknown): Promise<SettleOutcome> {
    // failClaim dead-letters a claim on its last attempt; a permanent error makes this one
    // the last. The entry keeps its configured maxAttempts for an operator retry.
    const settled = isPermanent(error) ? { ...claim, maxAttempts: claim.attempt } : claim;
    const outcome = await super.fail(settled, error);
    this.onSettled?.(claim, outcome);
    return outcome;
  }

  private async reply(claim: Claim, result: unknown): Promise<void> {
    if (typeof result !== 'object' || result === null) return;
    const { exchange, routingkey } = result as { exchange?: unknown; routingkey?: unknown };
    if (typeof routingkey !== 'string') return;
    try {
      const path = await publishResult(
        this.coordinator,
        { routingkey, ...(typeof exchange === 'string' ? { exchange } : {}) },
        result,
      );
      this.log?.debug?.({ key: claim.key.join('|'), path }, 'result published');
    } catch (err) {
      this.log?.warn(
        { key: claim.key.join('|'), err: String(err) },
        'could not publish the result to the reply channel',
      );
    }
  }
}
