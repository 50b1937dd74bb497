import type { Claim, Engine, SettleOutcome, TaskContext, TaskError } from '@zoott/core';
import type { Logger } from 'pino';

/** Longest error message kept in a log line: a job's stderr can be large. */
const MAX_ERROR_CHARS = 500;

/**
 * The failure as the engine recorded it, `code` and `message` (not what `fail` was given:
 * a result that could not be stored fails the task with the engine's own reason).
 */
function errorFields(error: TaskError): { code: string; error: string } {
  const text = error.message;
  return {
    code: error.code,
    error: text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text,
  };
}

/**
 * One log line per task transition, each with `world`, `key`, `type`, `attempt` and
 * `worker`, so an operator can follow a task through the logs of every worker (`grep` on
 * its key). Levels: start, completion, cancellation and hand-back are `info`; a failed
 * attempt, a fenced (dropped) result and a session loss `warn`; a dead letter `error`. So
 * `--log-level warn` keeps exactly the failures.
 */
export class TaskLog {
  constructor(
    private readonly log: Logger,
    private readonly worker: string,
  ) {}

  private fields(world: string, task: { key: readonly string[]; type: string; attempt: number }) {
    return {
      world,
      key: task.key.join('|'),
      type: task.type,
      attempt: task.attempt,
      worker: this.worker,
    };
  }

  /** A handler starts on a claimed task. */
  started(world: string, task: TaskContext): void {
    this.log.info({ ...this.fields(world, task), maxAttempts: task.maxAttempts }, 'task started');
  }

  /**
   * A settle outcome. A dropped result is told apart from a cancellation by looking the
   * task up: a cancelled task is gone (or left without state), a fenced one still exists.
   */
  async settled(engine: Engine, claim: Claim, outcome: SettleOutcome): Promise<void> {
    const base = this.fields(engine.world, claim);
    const durationMs = Date.now() - claim.startedAt;
    switch (outcome.status) {
      case 'completed':
        this.log.info({ ...base, durationMs }, 'task completed');
        return;
      case 'retrying':
        this.log.warn(
          {
            ...base,
            durationMs,
            ...errorFields(outcome.error),
            nextAttempt: claim.attempt + 1,
            notBefore: new Date(outcome.notBefore).toISOString(),
          },
          'task attempt failed, will retry',
        );
        return;
      case 'failed':
        this.log.error(
          { ...base, durationMs, ...errorFields(outcome.error), maxAttempts: claim.maxAttempts },
          'task failed for good (dead-lettered)',
        );
        return;
      case 'dropped': {
        if (outcome.reason === 'released') {
          this.log.info({ ...base, durationMs }, 'task given back (worker stopping)');
          return;
        }
        if (outcome.reason === 'cancelled') {
          this.log.info({ ...base, durationMs }, 'task cancelled while running; result dropped');
          return;
        }
        const record =
          outcome.reason === 'session lost'
            ? undefined
            : await engine.task(claim.key).catch(() => undefined);
        if (record === null || (record !== undefined && record.state === null)) {
          this.log.info({ ...base, durationMs }, 'task cancelled while running; result dropped');
          return;
        }
        this.log.warn(
          { ...base, durationMs, reason: outcome.reason },
          'task result dropped (claim no longer held)',
        );
      }
    }
  }
}
