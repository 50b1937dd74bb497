import { randomBytes } from 'node:crypto';
import { raceErrorResult, regularErrorResult } from '@zoott/core/jobs';
import type { Channel, ConsumeMessage } from 'amqplib';
import { type AmqpLink, PublishRefused } from './amqp-link.js';
import type { BridgeLogger } from './logger.js';
import { addressProblem, type JobKind, readableAddress } from './message.js';
import { withYothalotTimes } from './result.js';

/** Tries of one publication that fails for want of a channel (not refused by the broker). */
const PUBLISH_TRIES = 5;

/** What a refusal needs. */
export interface RefusalOptions {
  link: AmqpLink;
  logger: BridgeLogger;
  /** Exchange refused messages without an address go to; none: rejected without requeue. */
  deadLetterExchange?: string;
  /** Which exchanges results may go to (`--reply-exchanges`). */
  allowed: (exchange: string) => boolean;
  /** The `server` of error results: this bridge's host. */
  serverName: string;
}

/** Publishes through the link, again when the channel (not the broker) failed it. */
async function publishFirmly(
  link: AmqpLink,
  channel: Channel,
  ...args: Parameters<AmqpLink['publish']>
): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await link.publish(...args);
      return;
    } catch (err) {
      // Refused by the broker: trying again changes nothing. A consumer channel that closed:
      // the message is redelivered, and that delivery decides.
      if (err instanceof PublishRefused || i >= PUBLISH_TRIES || !link.isOpen(channel)) throw err;
    }
  }
}

/**
 * Ends a message the bridge will not queue, in exactly one of three ways, and acknowledges
 * (or rejects) it: when its address can be read and a result may go there, it is answered
 * with an error result (the spec's result, `error` saying why, no `exit`); otherwise it is
 * published to the dead-letter exchange (headers `x-zoott-error`, `x-zoott-queue`); without
 * one it is rejected without requeue (the queue's own dead-letter exchange, if any, gets it).
 * An error result the broker refuses (no queue bound, say) sends the message to the
 * dead-letter path instead, with that reason added. When the consumer channel closes first,
 * nothing is settled: the message comes back and is refused again.
 */
export async function refuse(
  options: RefusalOptions,
  kind: JobKind,
  msg: ConsumeMessage,
  channel: Channel,
  reason: string,
): Promise<void> {
  const queue = msg.fields.routingKey;
  const log = options.logger;
  const messageId = msg.properties.messageId as unknown;
  let why = reason;
  const readable = readableAddress(msg.content);
  const problem = readable ? addressProblem(readable.address, options.allowed) : null;
  if (readable && problem === null) {
    const refusal = { error: reason, server: options.serverName };
    const answer = withYothalotTimes(
      kind === 'race'
        ? raceErrorResult(readable.raw, refusal)
        : regularErrorResult(readable.raw, refusal),
    );
    const { exchange = '', routingkey } = readable.address;
    try {
      await publishFirmly(
        options.link,
        channel,
        exchange,
        routingkey,
        Buffer.from(JSON.stringify(answer)),
        {
          persistent: true,
          contentType: 'application/json',
          messageId: `zoott-refusal-${randomBytes(8).toString('hex')}`,
          mandatory: true,
        },
      );
      settle(channel, msg, 'ack');
      log.warn(
        { queue, messageId, reason, outcome: 'answered', exchange, routingkey },
        'message refused',
      );
      return;
    } catch (err) {
      if (!(err instanceof PublishRefused)) return leftForRedelivery(log, channel, msg, err);
      why = `${reason}; its error result could not be published: ${err.message}`;
    }
  } else if (readable && problem !== null) why = `${reason}; no error result: ${problem}`;
  await deadLetter(options, msg, channel, why);
}

/** The dead-letter path: the exchange, or a rejection without requeue. */
async function deadLetter(
  options: RefusalOptions,
  msg: ConsumeMessage,
  channel: Channel,
  reason: string,
): Promise<void> {
  const queue = msg.fields.routingKey;
  const log = options.logger;
  const messageId = msg.properties.messageId as unknown;
  const dlx = options.deadLetterExchange;
  if (dlx !== undefined) {
    try {
      await publishFirmly(options.link, channel, dlx, queue, msg.content, {
        ...msg.properties,
        headers: {
          ...(msg.properties.headers ?? {}),
          'x-zoott-error': reason,
          'x-zoott-queue': queue,
        },
        persistent: true,
        mandatory: true,
      });
      settle(channel, msg, 'ack');
      log.warn(
        { queue, messageId, reason, outcome: 'dead-lettered', deadLetterExchange: dlx },
        'message refused',
      );
      return;
    } catch (err) {
      if (!(err instanceof PublishRefused)) return leftForRedelivery(log, channel, msg, err);
      // A dead-letter exchange that is missing or routes nowhere: the queue's own one, if
      // any, is the last resort; the message is never held for it.
      reason = `${reason}; the dead-letter exchange refused it: ${err.message}`;
    }
  }
  settle(channel, msg, 'reject');
  log.warn(
    { queue, messageId, reason, outcome: 'rejected', deadLetterExchange: dlx ?? null },
    'message refused',
  );
}

/** Acknowledges or rejects (without requeue); a closed channel has already given it back. */
function settle(channel: Channel, msg: ConsumeMessage, how: 'ack' | 'reject'): void {
  try {
    if (how === 'ack') channel.ack(msg);
    else channel.reject(msg, false);
  } catch {
    // The channel closed: the message is redelivered and refused again.
  }
}

/**
 * A refusal that could not be published for want of a channel: the message goes back to its
 * queue (or has already, with its closed channel) and is refused again on its next delivery.
 */
function leftForRedelivery(
  log: BridgeLogger,
  channel: Channel,
  msg: ConsumeMessage,
  err: unknown,
): void {
  try {
    channel.nack(msg, false, true);
  } catch {
    // The channel closed: the broker has it back already.
  }
  log.warn(
    { queue: msg.fields.routingKey, err: String(err) },
    'could not settle a refused message; it goes back to its queue',
  );
}
