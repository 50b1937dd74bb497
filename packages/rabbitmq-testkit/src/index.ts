export { makeTestCertificates, opensslBinary, type TestCertificates } from './certs.js';
export { dockerAvailable } from './docker.js';
export { RabbitMqStartError, RabbitMqUnavailableError } from './errors.js';
export { DEBIAN_SERVER, LocalRabbitMq, localInstall } from './local.js';
export { type AmqpTlsProbe, amqpAnswers, freePort, waitAmqp } from './ready.js';
export { startRabbitMq } from './start.js';
export {
  type RabbitMqBroker,
  type RabbitMqTls,
  READY_TIMEOUT_MS,
  type StartRabbitMqOptions,
} from './types.js';
