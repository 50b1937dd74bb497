// @zoott/amqp-bridge: Yothalot JSON jobs from RabbitMQ queues into a zoott world, and their
// results back to the exchange and routing key each job names.
export {
  type AccessFailureKind,
  AmqpAccessError,
  accessFailure,
  loginOf,
} from './access-failure.js';
export {
  type AmqpLinkOptions,
  type AmqpStartFailure,
  maskUrl,
  PublishRefused,
} from './amqp-link.js';
export {
  type AmqpBridge,
  type AmqpBridgeOptions,
  type BridgeHooks,
  startAmqpBridge,
} from './bridge.js';
export {
  BRIDGE_EXCHANGE,
  DEFAULT_JOB_QUEUE,
  DEFAULT_RACE_QUEUE,
  ENVELOPE,
  TASK_PREFIX,
} from './constants.js';
export { forwarderPaths } from './forwarder.js';
export type { BridgeLogger } from './logger.js';
export {
  AMQP_NAME_MAX_BYTES,
  type AmqpAddress,
  addressProblem,
  type BridgedJob,
  bridgedJob,
  fingerprintOf,
  freshTaskName,
  type JobKind,
  readableAddress,
} from './message.js';
export { DEFAULT_EXCHANGE_PATTERN, replyExchangePolicy } from './reply-exchanges.js';
export { amqpResult, type OutgoingResult, withYothalotTimes } from './result.js';
export { yothalotTime } from './time.js';
export { AmqpTlsError, type TlsFailureKind, tlsFailure } from './tls-failure.js';
