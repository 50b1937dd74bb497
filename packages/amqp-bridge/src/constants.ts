/**
 * The reply address the bridge gives every job it queues that names a result address: the
 * worker publishes the result there (in ZooKeeper, in the same multi as the completion) and
 * the bridge forwards it to RabbitMQ. `~` cannot appear in a world name, and an AMQP
 * producer's own exchange is kept aside (see {@link ENVELOPE}), so no ZooKeeper user's
 * reply path is taken.
 */
export const BRIDGE_EXCHANGE = 'zoott~amqp';

/**
 * The custom property that carries the job's own `exchange` and `routingkey` through the
 * world; the bridge puts them back into the result and removes this property. A message
 * that sets it itself is refused as malformed.
 */
export const ENVELOPE = 'zoott~amqp';

/** Default queue names (Yothalot's master reads `jobs` and `races`). */
export const DEFAULT_JOB_QUEUE = 'jobs';
export const DEFAULT_RACE_QUEUE = 'races';

/** Prefix of the task names the bridge derives from messages. */
export const TASK_PREFIX = 'amqp-';
