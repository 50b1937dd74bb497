import { setTimeout as sleep } from 'node:timers/promises';
import type { Coordinator, Telemetry, TraceCarrier } from '@zoott/core';
import { worldRoot } from '@zoott/core/internal';
import { raceWorld, submitJob, submitRace } from '@zoott/jobs';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { AmqpLink } from './amqp-link.js';
import { BRIDGE_EXCHANGE } from './constants.js';
import type { BridgeLogger } from './logger.js';
import { type BridgedJob, bridgedJob, type JobKind, malformedReason } from './message.js';

/** First and longest wait between two attempts to queue a job while ZooKeeper is away. */
const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 5000;

/** What the intake needs. */
export interface IntakeOptions {
  coordinator: () => Coordinator;
  world: string;
  link: AmqpLink;
  /** Exchange malformed messages are published to (then acknowledged); none: rejected. */
  deadLetterExchange?: string;
  logger: BridgeLogger;
  /** Test hook: runs after a message is read as a job and before the job is queued. */
  beforeQueued?: (name: string) => Promise<void>;
  /** Test hook: runs after a job is queued and before its message is acknowledged. */
  afterQueued?: (name: string) => Promise<void>;
  stopped: () => boolean;
  /** Traces the queueing, continuing a trace the message's `traceparent` header names. */
  telemetry?: Telemetry;
}

/** Whether the task of a bridged job is already in its world (queued by an earlier delivery). */
async function alreadyQueued(c: Coordinator, world: string, job: BridgedJob): Promise<boolean> {
  const w = job.kind === 'race' ? raceWorld(world) : world;
  return (await c.exists(`${worldRoot(w)}/${job.name}`)) !== null;
}

/** The W3C trace context headers of a message (as an instrumented publisher sets them). */
function traceHeaders(msg: ConsumeMessage): TraceCarrier | undefined {
  const headers = msg.properties.headers ?? {};
  const text = (v: unknown) =>
    typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString() : null;
  const traceparent = text(headers.traceparent);
  if (traceparent === null) return undefined;
  const tracestate = text(headers.tracestate);
  return tracestate === null ? { traceparent } : { traceparent, tracestate };
}

/** Queues the job unless an earlier delivery of the same message did. */
async function queueOnce(
  c: Coordinator,
  world: string,
  job: BridgedJob,
  telemetry?: Telemetry,
  producer?: TraceCarrier,
): Promise<'queued' | 'duplicate'> {
  if (await alreadyQueued(c, world, job)) return 'duplicate';
  const data = job.address ? { ...job.job, exchange: BRIDGE_EXCHANGE, routingkey: world } : job.job;
  const submit = job.kind === 'race' ? submitRace : submitJob;
  const options = { world, name: job.name, ...(telemetry ? { engineOptions: { telemetry } } : {}) };
  // The task's queue span goes under the publisher's span, when the message names one.
  const from = telemetry && producer ? telemetry.contextManager.extract(producer) : undefined;
  const queue = () => submit(c, data, options);
  await (from !== undefined ? telemetry!.contextManager.with(from, queue) : queue());
  return 'queued';
}

/**
 * Takes one message from a job queue: a malformed one is dead-lettered (or rejected), a
 * valid one is queued into the world under a name derived from the message and only then
 * acknowledged. A redelivery (the bridge died before its ack) finds the task by that name
 * and is acknowledged without queueing it again. While ZooKeeper is away the message stays
 * unacknowledged and the bridge keeps trying.
 */
export function intakeHandler(kind: JobKind, options: IntakeOptions) {
  const log = options.logger;
  return async (msg: ConsumeMessage, channel: Channel): Promise<void> => {
    const queue = msg.fields.routingKey;
    let job: BridgedJob;
    try {
      job = bridgedJob(kind, msg.content, msg.properties.messageId as string | undefined);
    } catch (err) {
      const reason = malformedReason(err) ?? String(err);
      await deadLetter(msg, channel, queue, reason, options);
      return;
    }
    await options.beforeQueued?.(job.name);
    for (let delay = RETRY_BASE_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      if (options.stopped()) return; // left unacknowledged: redelivered to another bridge
      try {
        const outcome = await queueOnce(
          options.coordinator(),
          options.world,
          job,
          options.telemetry,
          traceHeaders(msg),
        );
        log.info({ task: job.name, kind, queue, outcome }, 'job from AMQP queued');
        break;
      } catch (err) {
        if (malformedReason(err) !== null) {
          await deadLetter(msg, channel, queue, malformedReason(err)!, options);
          return;
        }
        log.warn(
          { task: job.name, err: String(err), retryInMs: delay },
          'cannot queue the job yet',
        );
        await sleep(delay);
      }
    }
    await options.afterQueued?.(job.name);
    try {
      channel.ack(msg);
    } catch (err) {
      // The channel closed: the message comes back and finds its task already queued.
      log.warn(
        { task: job.name, err: String(err) },
        'could not acknowledge; it will be redelivered',
      );
    }
  };
}

/** Publishes a malformed message to the dead-letter exchange (confirmed), or rejects it. */
async function deadLetter(
  msg: ConsumeMessage,
  channel: Channel,
  queue: string,
  reason: string,
  options: IntakeOptions,
): Promise<void> {
  const log = options.logger;
  const dlx = options.deadLetterExchange;
  log.error(
    { queue, messageId: msg.properties.messageId, reason, deadLetterExchange: dlx ?? null },
    'malformed job message',
  );
  try {
    if (dlx !== undefined) {
      await options.link.publish(dlx, queue, msg.content, {
        ...msg.properties,
        headers: {
          ...(msg.properties.headers ?? {}),
          'x-zoott-error': reason,
          'x-zoott-queue': queue,
        },
        persistent: true,
      });
      channel.ack(msg);
    } else {
      // The queue's own dead-letter exchange (x-dead-letter-exchange), if it has one, gets it.
      channel.reject(msg, false);
    }
  } catch (err) {
    log.warn({ queue, err: String(err) }, 'could not dead-letter the message; it will come back');
  }
}
