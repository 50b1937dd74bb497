import type { EngineContext } from './context.js';
import { resultReaders } from './parent-results.js';
import type { ProgressReporter } from './progress.js';
import type { Claim } from './types.js';
import type { TaskContext } from './worker-types.js';

/**
 * What a handler gets for one claim: the task, its signal, the reads of its ancestors'
 * results and its progress reporter.
 */
export function taskContext(
  claim: Claim,
  signal: AbortSignal,
  worker: string,
  context: () => Promise<EngineContext>,
  reporter: ProgressReporter,
): TaskContext {
  const ctx: TaskContext = {
    key: claim.key,
    name: claim.name,
    type: claim.type,
    data: claim.data,
    attempt: claim.attempt,
    maxAttempts: claim.maxAttempts,
    signal,
    worker,
    ...resultReaders(context, claim.key),
    progress: (value) => reporter.progress(value),
    log: (line) => reporter.log(line),
  };
  if (claim.hints) ctx.hints = claim.hints;
  return ctx;
}
