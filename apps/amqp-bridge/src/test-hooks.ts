import type { BridgeHooks, BridgeLogger } from '@zoott/amqp-bridge';

/** Points where `ZOOTT_AMQP_BRIDGE_TEST_PAUSE` can stop the bridge. */
const POINTS = ['received', 'queued', 'settled', 'claimed', 'published'] as const;

/**
 * For the crash tests only: `ZOOTT_AMQP_BRIDGE_TEST_PAUSE=received` stops the bridge for good
 * after it read a message as a job (and opened its intake record) and before it queues the
 * job; `=queued` after it queued a job and before it removes the intake record and
 * acknowledges the message; `=settled` after it removed the record and before the
 * acknowledgement; `=claimed` after it took
 * a result from ZooKeeper and before it publishes it; `=published` after the broker
 * confirmed a result and before the result is removed from ZooKeeper. It logs
 * `test pause` (with `point` and the task or path) so the test knows it got there, and
 * then waits to be killed. Unset (always, outside the tests): no hooks.
 */
export function testHooks(
  env: Readonly<Record<string, string | undefined>>,
  logger: BridgeLogger,
): BridgeHooks | null {
  const point = env.ZOOTT_AMQP_BRIDGE_TEST_PAUSE;
  if (point === undefined || point === '') return null;
  if (!(POINTS as readonly string[]).includes(point))
    throw new Error(`ZOOTT_AMQP_BRIDGE_TEST_PAUSE must be one of ${POINTS.join(', ')}`);
  const pause = (what: string) => {
    logger.warn({ point, what }, 'test pause');
    return new Promise<void>(() => {});
  };
  if (point === 'received') return { beforeQueued: pause };
  if (point === 'queued') return { afterQueued: pause };
  if (point === 'settled') return { beforeAck: pause };
  return point === 'claimed' ? { beforePublish: pause } : { afterPublished: pause };
}
