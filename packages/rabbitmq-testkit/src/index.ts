export { dockerAvailable } from './docker.js';
export { RabbitMqStartError, RabbitMqUnavailableError } from './errors.js';
export { DEBIAN_SERVER, LocalRabbitMq, localInstall } from './local.js';
export { amqpAnswers, freePort, waitAmqp } from './ready.js';
export { startRabbitMq } from './start.js';
export { type RabbitMqBroker, READY_TIMEOUT_MS, type StartRabbitMqOptions } from './types.js';
