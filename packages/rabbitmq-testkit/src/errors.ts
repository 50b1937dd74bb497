/**
 * Thrown when no RabbitMQ can be found or started. It names every way to get one: a test
 * run that needs RabbitMQ fails loudly, it never skips.
 */
export class RabbitMqUnavailableError extends Error {
  readonly code = 'NO_RABBITMQ';

  constructor(reasons: readonly string[]) {
    super(`No RabbitMQ broker is available for the tests (RabbitMQ tests never skip).
Tried:
${reasons.map((r) => `  - ${r}`).join('\n')}
Any one of these makes one available:
  1. point at a running broker:  export ZOOTT_AMQP_URL=amqp://guest:guest@127.0.0.1:5672
  2. install it locally:         sudo apt-get install rabbitmq-server   (Debian/Ubuntu; brings Erlang)
  3. run a Docker engine:        the official 'rabbitmq' image is then started with testcontainers`);
    this.name = 'RabbitMqUnavailableError';
  }
}

/** The broker could not be started, or did not become ready. */
export class RabbitMqStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RabbitMqStartError';
  }
}
