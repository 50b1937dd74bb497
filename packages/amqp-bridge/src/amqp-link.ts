import { setTimeout as sleep } from 'node:timers/promises';
import amqp, {
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
  type Options,
  type SocketOptions,
} from 'amqplib';
import { type AmqpAccessError, accessFailure } from './access-failure.js';
import type { BridgeLogger } from './logger.js';
import { type AmqpTlsError, tlsFailure } from './tls-failure.js';

/** First and longest wait between two connection attempts. */
const RECONNECT_BASE_MS = 200;
const RECONNECT_MAX_MS = 10_000;
/** Longest wait for a connection's open handshake. */
const CONNECT_TIMEOUT_MS = 15_000;
/** Longest wait for one step of a new connection's setup (a channel, a consume). */
const SETUP_TIMEOUT_MS = 10_000;

/** `promise`, or a rejection naming `what` after `ms`. */
function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer from RabbitMQ ${what} within ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * A publication the broker refused for reasons of its own address, which trying again
 * right away will not change: `unroutable` (mandatory, and no queue is bound: the broker
 * returned it), `refused` (the broker closed the channel over it: no such exchange, no write
 * permission, an internal exchange), `invalid` (a name AMQP cannot carry). A connection that
 * went down is not one of these: that publication is simply not known to be published.
 */
export class PublishRefused extends Error {
  constructor(
    readonly kind: 'unroutable' | 'refused' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'PublishRefused';
  }
}

/** A mandatory publication waiting for its confirm: a return before it marks it unroutable. */
interface PendingReturn {
  exchange: string;
  routingKey: string;
  messageId: unknown;
  returned: string | null;
}

/** One consumer: a queue and what to do with each of its messages. */
export interface QueueConsumer {
  queue: string;
  onMessage: (msg: ConsumeMessage, channel: Channel) => Promise<void>;
}

/** Why a bridge that never got through gives up rather than retrying. */
export type AmqpStartFailure = AmqpTlsError | AmqpAccessError;

/** What {@link AmqpLink} needs to connect. */
export interface AmqpLinkOptions {
  /** `amqp://user:pass@host:port/vhost` or `amqps://...` (TLS). */
  url: string;
  /** TLS and socket options (ca, cert, key, servername, ...), passed to amqplib. */
  socketOptions?: SocketOptions;
  consumers: readonly QueueConsumer[];
  /** Messages in flight per consumer channel. */
  prefetch: number;
  /** Declare the queues (durable) when they are missing. */
  declareQueues: boolean;
  logger: BridgeLogger;
}

/** The URL with its password masked, for logs. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '****';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * A connection to RabbitMQ that comes back: on any close or error it reconnects with a
 * growing delay and consumes again. Consuming and publishing use separate channels: a
 * publish to an exchange that does not exist closes its channel, and that must not close
 * the consumers (their unacknowledged messages would all be redelivered). Publishes go
 * through a confirm channel, so `publish` resolves only when the broker has the message.
 */
export class AmqpLink {
  private model: ChannelModel | null = null;
  private publisher: ConfirmChannel | null = null;
  private stopped = false;
  private readyWaiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  /** Set once the link is up: from then on every failure is retried. */
  private everConnected = false;
  /** Why the link gave up before it was ever up; `ready()` rejects with it. */
  private failure: AmqpStartFailure | null = null;
  private loop: Promise<void> | null = null;
  /** Mandatory publications not yet confirmed, oldest first. */
  private readonly pendingReturns: PendingReturn[] = [];
  /** Consumer channels that closed: their unacknowledged messages go back to the queue. */
  private readonly closedChannels = new WeakSet<Channel>();

  constructor(private readonly options: AmqpLinkOptions) {}

  /**
   * Whether a consumer channel is still open: once it closed, its messages are redelivered
   * (to this bridge or another), and whoever held one must leave it to that delivery.
   */
  isOpen(channel: Channel): boolean {
    return !this.closedChannels.has(channel);
  }

  /** A message the broker returned (mandatory, unroutable): marks its publication. */
  private onReturn(msg: {
    fields: { exchange: string; routingKey: string; replyText?: string };
    properties: { messageId?: unknown };
  }): void {
    const hit = this.pendingReturns.find(
      (pending) =>
        pending.returned === null &&
        pending.exchange === msg.fields.exchange &&
        pending.routingKey === msg.fields.routingKey &&
        pending.messageId === msg.properties.messageId,
    );
    if (hit) hit.returned = msg.fields.replyText ?? 'NO_ROUTE';
  }

  /** A new publisher channel, wired: refusals logged nowhere (publish reports them), returns noted. */
  private async openPublisher(model: ChannelModel): Promise<ConfirmChannel> {
    const publisher = await model.createConfirmChannel();
    // A refused publish (no such exchange) closes this channel: open a new one.
    publisher.on('error', () => {});
    publisher.on('return', (msg: Parameters<AmqpLink['onReturn']>[0]) => this.onReturn(msg));
    publisher.on('close', () => {
      if (this.publisher !== publisher || this.model !== model) return;
      // Every publication in flight on it lost its confirm and will be published again.
      this.options.logger.warn({}, 'the publish channel closed; reopening it');
      void this.reopenPublisher(model);
    });
    return publisher;
  }

  /** Connects (retrying until it works or {@link close}) and keeps the link up. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Whether a publisher channel is open now. */
  get connected(): boolean {
    return this.publisher !== null;
  }

  /**
   * Resolves when the link is up (at once if it is); rejects with an `AmqpTlsError` when the
   * first connection failed its TLS handshake, or an `AmqpAccessError` when the broker refused
   * its login, vhost or queues (the link then gave up).
   */
  ready(): Promise<void> {
    if (this.publisher) return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  private wakeWaiters(): void {
    for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
  }

  /**
   * Publishes one message and resolves when the broker confirmed it. Rejects with
   * {@link PublishRefused} when the broker refused it for its address (with `mandatory`: also
   * when no queue took it), or with another error when the channel or connection went down
   * first; either way nothing is known to be published.
   */
  async publish(exchange: string, routingKey: string, body: Buffer, props: Options.Publish) {
    let channel = this.publisher;
    if (!channel) {
      await this.ready();
      channel = this.publisher;
    }
    if (!channel) throw new Error('not connected to RabbitMQ');
    await this.publishOn(channel, exchange, routingKey, body, props);
  }

  /**
   * Publishes one message on a confirm channel of its own, opened for it and closed after:
   * for a publication the broker refused before (an exchange that does not exist closes the
   * channel it is published on). On the shared channel its retry would close that channel
   * again, and every other result in flight there would lose its confirm and be published a
   * second time. Settles as {@link publish} does.
   */
  async publishAlone(exchange: string, routingKey: string, body: Buffer, props: Options.Publish) {
    if (!this.publisher) await this.ready();
    const model = this.model;
    if (!model) throw new Error('not connected to RabbitMQ');
    const channel = await withDeadline(
      model.createConfirmChannel(),
      SETUP_TIMEOUT_MS,
      'opening a channel for a refused result',
    );
    channel.on('error', () => {});
    channel.on('return', (msg: Parameters<AmqpLink['onReturn']>[0]) => this.onReturn(msg));
    let open = true;
    channel.once('close', () => {
      open = false;
    });
    try {
      await this.publishOn(channel, exchange, routingKey, body, props);
    } finally {
      if (open) await channel.close().catch(() => {});
    }
  }

  private async publishOn(
    channel: ConfirmChannel,
    exchange: string,
    routingKey: string,
    body: Buffer,
    props: Options.Publish,
  ): Promise<void> {
    const pending: PendingReturn = {
      exchange,
      routingKey,
      messageId: props.messageId,
      returned: null,
    };
    if (props.mandatory) this.pendingReturns.push(pending);
    try {
      await confirmed(channel, exchange, routingKey, body, props, pending);
    } finally {
      const index = this.pendingReturns.indexOf(pending);
      if (index >= 0) this.pendingReturns.splice(index, 1);
    }
  }

  /** Closes the connection and stops reconnecting. */
  async close(): Promise<void> {
    this.stopped = true;
    this.wakeWaiters();
    const model = this.model;
    this.model = null;
    this.publisher = null;
    await model?.close().catch(() => {});
    await this.loop;
  }

  private async run(): Promise<void> {
    const log = this.options.logger;
    for (let delay = RECONNECT_BASE_MS; !this.stopped; ) {
      try {
        const { closed } = await this.connectOnce();
        delay = RECONNECT_BASE_MS;
        this.everConnected = true;
        log.info({ url: maskUrl(this.options.url) }, 'connected to RabbitMQ');
        const err = await closed;
        if (this.stopped) return;
        log.warn({ err: String(err ?? 'closed') }, 'RabbitMQ connection lost; reconnecting');
      } catch (err) {
        if (this.stopped) return;
        const shown = maskUrl(this.options.url);
        const tls = tlsFailure(err, shown);
        const access = tls ? null : accessFailure(err, this.options.url, shown);
        const fatal = tls ?? access;
        if (fatal && !this.everConnected) {
          // Certificates and credentials do not fix themselves: a bridge that never got
          // through gives up and says why. One that ran before retries (a broker may be
          // mid-rotation of its certificates, or of the bridge's password).
          this.giveUp(fatal);
          return;
        }
        if (tls)
          log.error({ err: tls.message, retryInMs: delay }, 'TLS with RabbitMQ failed; retrying');
        else if (access)
          log.warn(
            { err: access.message, kind: access.kind, retryInMs: delay },
            'RabbitMQ refused access; retrying',
          );
        else
          log.warn({ err: String(err), retryInMs: delay }, 'cannot connect to RabbitMQ; retrying');
        await sleep(delay);
        delay = Math.min(delay * 2, RECONNECT_MAX_MS);
      }
    }
  }

  /**
   * One connection with its channels and consumers; resolves when they are set up, to a
   * promise of the connection's end (wrapped: an async function returning a promise would
   * wait for it).
   */
  private async connectOnce(): Promise<{ closed: Promise<unknown> }> {
    const { url, socketOptions, consumers, prefetch, declareQueues } = this.options;
    // A broker that accepts the connection but never answers (still booting, or wedged)
    // must not hold the bridge forever: the open handshake gets a deadline.
    const model = await amqp.connect(url, { timeout: CONNECT_TIMEOUT_MS, ...socketOptions });
    let onEnd!: (err: unknown) => void;
    const ended = new Promise<unknown>((resolve) => {
      onEnd = resolve;
    });
    const end = (err?: unknown) => {
      if (this.model === model) {
        this.model = null;
        this.publisher = null;
      }
      void model.close().catch(() => {});
      onEnd(err);
    };
    model.on('error', (err: Error) => end(err));
    model.on('close', (err?: Error) => end(err));
    // Each step of the setup gets a deadline: a broker just back from a crash may leave a
    // step unanswered (a consume on a queue still being recovered), and a retry on a new
    // connection gets through where waiting would hold the bridge for minutes.
    const step = <T>(what: string, p: Promise<T>) => withDeadline(p, SETUP_TIMEOUT_MS, what);
    // No message is handled before every consumer is set up: a later step the broker refuses
    // (no right to read the second queue) ends the connection, and what the first consumer
    // got goes back to its queue unhandled rather than into the world of a bridge that exits.
    let setUp!: (ok: boolean) => void;
    const whenSetUp = new Promise<boolean>((resolve) => {
      setUp = resolve;
    });
    try {
      const publisher = await step('opening the publish channel', this.openPublisher(model));
      for (const consumer of consumers) {
        const channel = await step(
          `opening the channel of ${consumer.queue}`,
          model.createChannel(),
        );
        channel.on('error', (err: Error) => end(err));
        channel.on('close', () => {
          this.closedChannels.add(channel);
          end(new Error(`consumer channel of ${consumer.queue} closed`));
        });
        await step(`setting the prefetch of ${consumer.queue}`, channel.prefetch(prefetch));
        await step(
          `declaring ${consumer.queue}`,
          declareQueues
            ? channel.assertQueue(consumer.queue, { durable: true })
            : channel.checkQueue(consumer.queue),
        );
        const consuming = channel.consume(consumer.queue, (msg) => {
          if (msg === null) {
            end(new Error(`the broker cancelled the consumer of ${consumer.queue}`));
            return;
          }
          void whenSetUp
            .then((ok) => (ok ? consumer.onMessage(msg, channel) : undefined))
            .catch((err: unknown) =>
              // A handler settles its message itself; one that failed leaves it to the
              // channel's end (redelivered then), never to an unhandled rejection.
              this.options.logger.error(
                { queue: consumer.queue, err: String(err) },
                'message handler failed',
              ),
            );
        });
        await step(`consuming ${consumer.queue}`, consuming);
      }
      this.model = model;
      this.publisher = publisher;
      setUp(true);
      this.wakeWaiters();
    } catch (err) {
      setUp(false);
      end(err);
      throw err;
    }
    return { closed: ended };
  }

  private giveUp(failure: AmqpStartFailure): void {
    this.failure = failure;
    this.stopped = true;
    for (const waiter of this.readyWaiters.splice(0)) waiter.reject(failure);
  }

  private async reopenPublisher(model: ChannelModel): Promise<void> {
    this.publisher = null;
    try {
      const publisher = await this.openPublisher(model);
      if (this.model !== model) return;
      this.publisher = publisher;
      this.wakeWaiters();
    } catch {
      // The connection is going down too: run() reconnects.
    }
  }
}

/**
 * One publication on a confirm channel, settled by its confirm. The broker's reason for
 * closing the channel arrives (as an `error` event) before the pending confirms fail; when it
 * names this publication's exchange, the publication is the one refused.
 */
function confirmed(
  channel: ConfirmChannel,
  exchange: string,
  routingKey: string,
  body: Buffer,
  props: Options.Publish,
  pending: PendingReturn,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let closedBy: Error | null = null;
    const onError = (err: Error) => {
      closedBy = err;
    };
    const failure = (err: unknown): Error => {
      const text = String(closedBy?.message ?? '');
      if (closedBy && text.includes(`'${exchange}'`)) return new PublishRefused('refused', text);
      if (closedBy) return new Error(`the publish channel closed: ${text}`);
      return err instanceof Error ? err : new Error(String(err));
    };
    const onClose = () => {
      cleanup();
      reject(failure(new Error('the channel closed before the broker confirmed')));
    };
    const cleanup = () => {
      channel.off('error', onError);
      channel.off('close', onClose);
    };
    channel.on('error', onError);
    channel.once('close', onClose);
    try {
      channel.publish(exchange, routingKey, body, props, (err) => {
        cleanup();
        if (err) reject(failure(err));
        else if (pending.returned !== null)
          reject(
            new PublishRefused(
              'unroutable',
              `unroutable: no queue is bound to routing key ${JSON.stringify(routingKey)} of ${exchange === '' ? 'the default exchange' : `exchange ${JSON.stringify(exchange)}`} (${pending.returned})`,
            ),
          );
        else resolve();
      });
    } catch (err) {
      cleanup();
      // amqplib checks names before anything is sent: a routing key over 255 bytes, say.
      reject(err instanceof TypeError ? new PublishRefused('invalid', err.message) : err);
    }
  });
}
