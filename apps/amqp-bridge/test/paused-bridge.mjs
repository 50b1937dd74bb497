// @zoott/amqp-bridge as the crash tests hand it to the bridge binary: the same library, whose
// startAmqpBridge pauses for good at ZOOTT_AMQP_BRIDGE_TEST_PAUSE, through the library's
// public `hooks` option. `received` stops after a message was read as a job (and its intake
// record opened) and before it is queued; `queued` after the job was queued and before the
// intake record is removed and the message acknowledged; `settled` after the record was
// removed and before the acknowledgement; `claimed`
// after a result was taken from ZooKeeper and before it is published; `published` after the
// broker confirmed a result and before the result is removed. It logs `test pause` (with
// `point` and the task or path) so the test knows it got there, then waits to be killed.
import { startAmqpBridge as startReal } from '@zoott/amqp-bridge';

export * from '@zoott/amqp-bridge';

const POINTS = ['received', 'queued', 'settled', 'claimed', 'published'];

function pauseHooks(point, logger) {
  if (!POINTS.includes(point))
    throw new Error(`ZOOTT_AMQP_BRIDGE_TEST_PAUSE must be one of ${POINTS.join(', ')}`);
  const pause = (what) => {
    logger.warn({ point, what }, 'test pause');
    return new Promise(() => {});
  };
  if (point === 'received') return { beforeQueued: pause };
  if (point === 'queued') return { afterQueued: pause };
  if (point === 'settled') return { beforeAck: pause };
  return point === 'claimed' ? { beforePublish: pause } : { afterPublished: pause };
}

export function startAmqpBridge(options) {
  const hooks = pauseHooks(process.env.ZOOTT_AMQP_BRIDGE_TEST_PAUSE, options.logger);
  return startReal({ ...options, hooks });
}
