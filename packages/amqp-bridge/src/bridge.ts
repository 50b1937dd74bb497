import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Coordinator, Telemetry } from '@zoott/core';
import type { SocketOptions } from 'amqplib';
import { AmqpLink } from './amqp-link.js';
import { DEFAULT_JOB_QUEUE, DEFAULT_RACE_QUEUE } from './constants.js';
import { ensureBridgePath, Forwarder, forwarderPaths } from './forwarder.js';
import { intakeHandler } from './intake.js';
import { IntakeRecords } from './intake-records.js';
import { type BridgeLogger, silentLogger } from './logger.js';
import { replyExchangePolicy } from './reply-exchanges.js';
import { openBridgeWorld } from './world.js';

/** First and longest wait between two attempts to renew a lost ZooKeeper session. */
const RENEW_BASE_MS = 100;
const RENEW_MAX_MS = 5000;

/** Settings of one bridge. */
export interface AmqpBridgeOptions {
  /** A ready ZooKeeper session (the bridge renews it when it is lost; never closes it). */
  coordinator: Coordinator;
  /** The zoott world jobs are queued into and results come from. */
  world: string;
  /** `amqp://user:password@host:5672/vhost`, or `amqps://` for TLS. */
  url: string;
  /** TLS options (`ca`, `cert`, `key`, `servername`, ...) for `amqps://`. */
  socketOptions?: SocketOptions;
  /** Queue of regular jobs (default `jobs`). */
  jobQueue?: string;
  /** Queue of race jobs (default `races`). */
  raceQueue?: string;
  /** Exchange malformed messages are published to; unset: they are rejected (not requeued). */
  deadLetterExchange?: string;
  /** Unacknowledged messages per queue (default 16). */
  prefetch?: number;
  /** Declare missing queues as durable (default true); false: they must exist. */
  declareQueues?: boolean;
  /**
   * Exchanges results may be published to, as patterns (`*` any characters, `?` one, `""`
   * the default exchange). Default: any, as Yothalot. A job naming another is refused.
   */
  replyExchanges?: readonly string[];
  /** Deliveries of one message before it is refused instead of tried again (default 5). */
  maxDeliveries?: number;
  /** How long a result the broker refuses is retried before it is parked (default 60 s). */
  parkAfterMs?: number;
  /** Create the world when it does not exist (default false: the bridge refuses to start). */
  createWorld?: boolean;
  /** The `server` of the error results the bridge publishes (default: the host name). */
  serverName?: string;
  logger?: BridgeLogger;
  /**
   * Traces every job it queues (`otelTelemetry()` of `@zoott/otel`), under the publisher's
   * trace when the message carries W3C `traceparent`/`tracestate` headers.
   */
  telemetry?: Telemetry;
  /** Test hooks: run between the two steps of each guarantee (see the README). */
  hooks?: BridgeHooks;
}

/** Test hooks: each runs between two steps of a guarantee, to crash the bridge there. */
export interface BridgeHooks {
  /** After a message is read as a job, before the job is queued (nothing acknowledged yet). */
  beforeQueued?: (task: string) => Promise<void>;
  /** After a job is queued, before its intake record is removed and its message acknowledged. */
  afterQueued?: (task: string) => Promise<void>;
  /** After a job's intake record is removed, before its message is acknowledged. */
  beforeAck?: (task: string) => Promise<void>;
  /** After a result is claimed, before it is published. */
  beforePublish?: (path: string) => Promise<void>;
  /** After the broker confirmed a result, before it is removed from ZooKeeper. */
  afterPublished?: (path: string) => Promise<void>;
}

/** A running bridge. */
export interface AmqpBridge {
  /** Stops consuming and forwarding, closes the AMQP connection; the session stays open. */
  stop(): Promise<void>;
}

/**
 * Starts a bridge between RabbitMQ and a zoott world: jobs in from the regular and race
 * queues, results out to the exchange and routing key each job names. Returns once the
 * first AMQP connection is up; from then on it reconnects to RabbitMQ and renews the
 * ZooKeeper session by itself. Several bridges may serve one world and one set of queues.
 *
 * @throws ZoottError WORLD_NOT_INITIALISED naming the worlds that exist, when the world does
 *   not and `createWorld` is not set (nothing is consumed).
 * @throws AmqpTlsError when the first connection fails its TLS handshake (an untrusted
 *   broker certificate, a client certificate the broker refuses or requires), and
 *   AmqpAccessError when the broker refuses its login (user or password), its vhost, or
 *   its queues (no permission to declare or consume them): retrying would not help. A
 *   broker that cannot be reached is waited for instead.
 */
export async function startAmqpBridge(options: AmqpBridgeOptions): Promise<AmqpBridge> {
  const logger = options.logger ?? silentLogger;
  const coordinator = options.coordinator;
  let stopped = false;
  const isStopped = () => stopped;
  const get = () => coordinator;
  const world = options.world;
  // Before anything is consumed: a typo in the world must not queue jobs nobody serves.
  const engines = await openBridgeWorld(coordinator, world, options);
  const paths = forwarderPaths(world);
  let acl = await engines.acl();
  await ensureBridgePath(coordinator, paths.intake, acl);
  const records = new IntakeRecords(get, paths.intake, () => acl);
  const allowed = replyExchangePolicy(options.replyExchanges);
  const refusal = {
    get link() {
      return link;
    },
    logger,
    allowed,
    serverName: options.serverName ?? hostname(),
    ...(options.deadLetterExchange !== undefined
      ? { deadLetterExchange: options.deadLetterExchange }
      : {}),
  };
  // Filled in below: the consumers need the link and the link its consumers.
  const link: AmqpLink = new AmqpLink({
    url: options.url,
    ...(options.socketOptions ? { socketOptions: options.socketOptions } : {}),
    prefetch: options.prefetch ?? 16,
    declareQueues: options.declareQueues ?? true,
    logger,
    consumers: (['regular', 'race'] as const).map((kind) => ({
      queue:
        kind === 'race'
          ? (options.raceQueue ?? DEFAULT_RACE_QUEUE)
          : (options.jobQueue ?? DEFAULT_JOB_QUEUE),
      onMessage: intakeHandler(kind, {
        coordinator: get,
        world,
        get link() {
          return link;
        },
        records,
        engines,
        refusal,
        maxDeliveries: options.maxDeliveries ?? 5,
        logger,
        stopped: isStopped,
        ...(options.telemetry ? { telemetry: options.telemetry } : {}),
        ...(options.hooks?.beforeQueued ? { beforeQueued: options.hooks.beforeQueued } : {}),
        ...(options.hooks?.afterQueued ? { afterQueued: options.hooks.afterQueued } : {}),
        ...(options.hooks?.beforeAck ? { beforeAck: options.hooks.beforeAck } : {}),
      }),
    })),
  });
  const forwarder = new Forwarder({
    coordinator: get,
    world,
    link,
    logger,
    allowed,
    parkAfterMs: options.parkAfterMs ?? 60_000,
    stopped: isStopped,
    ...(options.hooks?.beforePublish ? { beforePublish: options.hooks.beforePublish } : {}),
    ...(options.hooks?.afterPublished ? { afterPublished: options.hooks.afterPublished } : {}),
  });

  const renew = async () => {
    for (let delay = RENEW_BASE_MS; !stopped && coordinator.state === 'lost'; ) {
      try {
        await coordinator.renewSession();
        logger.info({ sessionId: coordinator.sessionId }, 'ZooKeeper session renewed');
      } catch (err) {
        logger.warn({ err: String(err), retryInMs: delay }, 'cannot renew the ZooKeeper session');
        await sleep(delay);
        delay = Math.min(delay * 2, RENEW_MAX_MS);
      }
    }
    forwarder.poke();
  };
  const offSession = coordinator.onSession((event) => {
    if (event.type === 'lost') {
      logger.warn({}, 'ZooKeeper session lost; renewing it');
      void renew();
    } else if (event.type === 'connected' || event.type === 'reconnected') {
      // A renewed session may come with another ACL on the world (credentials changed).
      void engines.acl().then(
        (freshAcl) => {
          acl = freshAcl;
        },
        () => undefined,
      );
      forwarder.poke();
    }
  });

  link.start();
  try {
    await link.ready();
  } catch (err) {
    // The first connection failed its TLS handshake or was refused: nothing was consumed
    // (a consumer's first message comes only after all of them are set up); leave nothing running.
    stopped = true;
    offSession();
    await link.close();
    throw err;
  }
  const forwarding = forwarder.run();
  return {
    async stop() {
      stopped = true;
      offSession();
      forwarder.poke();
      await link.close();
      await forwarding;
    },
  };
}
