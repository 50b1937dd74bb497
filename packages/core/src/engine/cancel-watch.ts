import type { Coordinator } from '../contract/coordinator.js';
import type { Claim, EngineClock } from './types.js';

/** How long a task runs before its worker starts watching for a cancel of it. */
export const DEFAULT_CANCEL_WATCH_AFTER_MS = 250;

/**
 * Watches a running claim's working node and calls `onCancelled` once when it goes (or is
 * found held by another session) while the handler still runs: `cancel` deletes the working
 * node, so that is how a worker learns that the task it runs was cancelled.
 *
 * The watch is set only after `afterMs`: most tasks end sooner, and an `exists` per task
 * would add a read to every claim. A cancel that lands before the watch is set is still seen,
 * because the first `exists` then finds the node gone. `done` aborts when the handler has
 * returned: the worker's own settle deletes the node too, and that is no cancel.
 */
export function watchForCancel(
  coordinator: Coordinator,
  claim: Claim,
  clock: EngineClock,
  afterMs: number,
  done: AbortSignal,
  onCancelled: () => void,
): void {
  let fired = false;
  const fire = () => {
    if (fired || done.aborted) return;
    fired = true;
    onCancelled();
  };
  const arm = async (): Promise<void> => {
    while (!done.aborted && !fired) {
      try {
        const stat = await coordinator.exists(claim.workingPath, {
          watch: (e) => {
            if (e.type === 'deleted') fire();
            // Anything else (a data change someone made by hand): keep watching.
            else void arm();
          },
        });
        // Gone, or re-created by another session after a cancel and a re-queue.
        if (!stat || stat.ephemeralOwner !== claim.session) fire();
        return;
      } catch {
        // Connection trouble: a lost session voids the claim on its own (the worker aborts
        // its handlers); a suspended one comes back, so look again a little later.
        if (coordinator.state === 'lost' || coordinator.state === 'closed') return;
        await clock.sleep(afterMs, done);
      }
    }
  };
  void clock.sleep(afterMs, done).then(() => arm());
}
