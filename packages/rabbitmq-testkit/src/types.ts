import type { TestCertificates } from './certs.js';

/** The TLS listener of a broker started with `tls`. */
export interface RabbitMqTls {
  /** `amqps://guest:guest@127.0.0.1:<tlsPort>`. */
  readonly url: string;
  readonly port: number;
  /** Whether the broker refuses a client without a certificate its CA signed (mutual TLS). */
  readonly requirePeerCert: boolean;
  /** The broker's throwaway CA, its certificate and a client certificate, as PEM files. */
  readonly certs: TestCertificates;
}

/** A running broker a test can use. */
export interface RabbitMqBroker {
  /** `amqp://guest:guest@127.0.0.1:<port>`: the broker's default user, loopback only. */
  readonly url: string;
  readonly port: number;
  /** `local` (Debian's rabbitmq-server), `docker` (testcontainers) or `external` (ZOOTT_AMQP_URL). */
  readonly kind: 'local' | 'docker' | 'external';
  /** Erlang node name of a local broker (`<name>@localhost`). */
  readonly nodeName?: string;
  /** Its TLS listener, when started with `tls` (local brokers only). */
  readonly tls?: RabbitMqTls;
  /** Stops the broker: gracefully, or with SIGKILL (a crash). */
  stop(options?: { kill?: boolean }): Promise<void>;
  /** Starts a stopped broker again on the same port with the same data. */
  start(): Promise<void>;
  /**
   * Runs `rabbitmqctl <args>` against this broker and resolves to its stdout, so a test
   * checks the broker's own view as an operator would (`list_consumers`, `list_queues`).
   * A broker that is not the test's own (`external`) refuses: start one with `own: true`.
   */
  rabbitmqctl(args: string[]): Promise<string>;
}

/** Options of `startRabbitMq`. */
export interface StartRabbitMqOptions {
  /** Ignore ZOOTT_AMQP_URL: this test stops or restarts its broker. */
  own?: boolean;
  /** Folder for the broker's data and logs (default: a temporary folder removed at exit). */
  dir?: string;
  /**
   * Also open a TLS listener (`listeners.ssl.default`) on a free port, with a CA, server and
   * client certificate made for this broker at start (needs the `openssl` binary), the
   * broker checking clients that present a certificate (`verify_peer`). `requirePeerCert`:
   * refuse clients without one (`fail_if_no_peer_cert`, mutual TLS). Implies `own`, and a
   * broker from Debian's package.
   */
  tls?: boolean | { requirePeerCert?: boolean };
}

/** How long a broker may take to boot (Erlang on a loaded two-core machine). */
export const READY_TIMEOUT_MS = 90_000;
