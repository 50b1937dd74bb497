import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Coordinator,
  type Engine,
  isZoottError,
  type Telemetry,
  type TraceCarrier,
} from '@zoott/core';
import { worldRoot } from '@zoott/core/internal';
import { raceWorld, submitJob, submitRace } from '@zoott/jobs';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { AmqpLink } from './amqp-link.js';
import { BRIDGE_EXCHANGE } from './constants.js';
import type { IntakeRecord, IntakeRecords } from './intake-records.js';
import type { BridgeLogger } from './logger.js';
import {
  addressProblem,
  type BridgedJob,
  bridgedJob,
  freshTaskName,
  type JobKind,
  malformedReason,
} from './message.js';
import { type RefusalOptions, refuse } from './refusal.js';

/** First and longest wait between two attempts while ZooKeeper is away. */
const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 5000;
/** Tries of a step that fails for a reason the bridge does not know, before it gives up. */
const UNEXPECTED_TRIES = 5;

/**
 * Refusals by the engine that no retry changes: the job is invalid, its task data too large
 * (stdin over 512 KiB), a placement hint empty. The message is answered or dead-lettered.
 */
const PERMANENT = ['INVALID_JOB', 'INVALID_TASK', 'DATA_TOO_LARGE', 'INVALID_PATH'] as const;
/**
 * ZooKeeper away or refusing for now (its session lost, credentials not yet granted, the
 * world gone): not the message's fault. The bridge keeps the message and tries again with
 * backoff, for as long as it takes; it never hands it back for this, so an outage never
 * counts as a delivery.
 */
const TRANSIENT = [
  'CONNECTION_LOSS',
  'OPERATION_TIMEOUT',
  'SESSION_EXPIRED',
  'SESSION_MOVED',
  'CLOSED',
  'NO_ZOOKEEPER',
  'NOT_READ_ONLY',
  'NO_AUTH',
  'AUTH_FAILED',
  'WORLD_NOT_INITIALISED',
] as const;

/** What the intake needs. */
export interface IntakeOptions {
  coordinator: () => Coordinator;
  world: string;
  link: AmqpLink;
  records: IntakeRecords;
  /** Engines of the world and of its race world, kept for every message. */
  engines: { regular: Engine; race: Engine };
  refusal: RefusalOptions;
  /** Deliveries of one message after which it is refused instead of tried again. */
  maxDeliveries: number;
  logger: BridgeLogger;
  /** Test hook: after the intake record is opened, before the job is queued. */
  beforeQueued?: (name: string) => Promise<void>;
  /** Test hook: after the job is queued, before the intake record is removed. */
  afterQueued?: (name: string) => Promise<void>;
  /** Test hook: after the intake record is removed, before the message is acknowledged. */
  beforeAck?: (name: string) => Promise<void>;
  stopped: () => boolean;
  /** Traces the queueing, continuing a trace the message's `traceparent` header names. */
  telemetry?: Telemetry;
}

/** This delivery is no longer the one to settle its message (its channel closed, or the bridge stops). */
class Abandoned extends Error {}

/** The engine refused the job for good: `reason` says why. */
class Refused extends Error {}

/** The W3C trace context headers of a message (as an instrumented publisher sets them). */
function traceHeaders(msg: ConsumeMessage): TraceCarrier | undefined {
  const headers = msg.properties.headers ?? {};
  const text = (value: unknown) =>
    typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString() : null;
  const traceparent = text(headers.traceparent);
  if (traceparent === null) return undefined;
  const tracestate = text(headers.tracestate);
  return tracestate === null ? { traceparent } : { traceparent, tracestate };
}

/**
 * Takes one message from a job queue and ends it in exactly one way: queued (then
 * acknowledged), or refused (answered with an error result, dead-lettered, or rejected; see
 * `refuse`). A message delivered more than `maxDeliveries` times is refused whatever the
 * engine would say: x-delivery-count counts them on a quorum queue, the bridge's own
 * intake records on a classic one. Queueing is exactly once across a bridge that dies between
 * queueing and acknowledging (see {@link IntakeRecords}), and two posts of one body are two
 * jobs. While ZooKeeper is away the message stays with the bridge, which keeps trying.
 */
export function intakeHandler(kind: JobKind, options: IntakeOptions) {
  return async (msg: ConsumeMessage, channel: Channel): Promise<void> => {
    const log = options.logger;
    const queue = msg.fields.routingKey;
    const messageId = msg.properties.messageId as string | undefined;
    let job: BridgedJob;
    try {
      job = bridgedJob(kind, msg.content, messageId);
    } catch (err) {
      const reason = malformedReason(err) ?? String(err);
      log.error(
        {
          queue,
          messageId,
          reason,
          deadLetterExchange: options.refusal.deadLetterExchange ?? null,
        },
        'malformed job message',
      );
      await refuse(options.refusal, kind, msg, channel, reason);
      return;
    }
    const problem = job.address ? addressProblem(job.address, options.refusal.allowed) : null;
    if (problem !== null) {
      await refuse(options.refusal, kind, msg, channel, problem);
      return;
    }
    const step = stepper(options, msg, channel);
    try {
      const counted = await countDelivery(options, msg, job, step);
      if (counted !== null && counted > options.maxDeliveries) {
        const reason = `delivered ${counted} times without being queued (--max-deliveries is ${options.maxDeliveries})`;
        await refuse(options.refusal, kind, msg, channel, reason);
        void options.records.clearCount(job.fingerprint);
        return;
      }
      const { task, outcome } = await queueOnce(options, msg, job, step);
      if (counted !== null) void options.records.clearCount(job.fingerprint);
      await options.beforeAck?.(task);
      try {
        channel.ack(msg);
      } catch (err) {
        // The channel closed: the message comes back and is queued again (a duplicate in this
        // instant, never a loss: the record is gone, so nothing swallows it).
        log.warn({ task, err: String(err) }, 'could not acknowledge; it will be redelivered');
        return;
      }
      log.info(
        { task, kind, queue, outcome, redelivered: msg.fields.redelivered, messageId },
        'job from AMQP queued',
      );
    } catch (err) {
      if (err instanceof Refused) await refuse(options.refusal, kind, msg, channel, err.message);
      else if (err instanceof Abandoned)
        log.info({ queue, messageId }, 'message left to its redelivery');
      else {
        // Not the message's doing, nor ZooKeeper being away (a hook, say): hand it back; its
        // deliveries are counted, so this cannot go on for ever.
        log.error(
          { queue, messageId, err: String(err) },
          'cannot queue the job; the message goes back to its queue',
        );
        try {
          channel.nack(msg, false, true);
        } catch {
          // Closed: it went back already.
        }
      }
    }
  };
}

/** Runs ZooKeeper steps of one delivery: transient failures retried, others classified. */
type Step = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

function stepper(options: IntakeOptions, msg: ConsumeMessage, channel: Channel): Step {
  const log = options.logger;
  return async (what, fn) => {
    let unexpected = 0;
    for (let delay = RETRY_BASE_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      if (options.stopped() || !options.link.isOpen(channel)) throw new Abandoned();
      try {
        return await fn();
      } catch (err) {
        if (PERMANENT.some((code) => isZoottError(err, code)))
          throw new Refused((err as Error).message);
        const transient = TRANSIENT.some((code) => isZoottError(err, code));
        if (!transient && ++unexpected >= UNEXPECTED_TRIES) {
          // Not ZooKeeper being away and not the job: hand the message back; its deliveries
          // are counted, so this cannot go on for ever.
          log.error(
            { what, err: String(err) },
            'cannot queue the job; the message goes back to its queue',
          );
          try {
            channel.nack(msg, false, true);
          } catch {
            // Closed: it went back already.
          }
          throw new Abandoned();
        }
        log.warn({ what, err: String(err), retryInMs: delay }, 'cannot queue the job yet');
        await sleep(delay);
      }
    }
  };
}

/**
 * Which delivery of its message this is, for a redelivery (`null` for a first delivery: it
 * is the first). A quorum queue says so itself (`x-delivery-count`: earlier deliveries
 * returned); on a classic queue the bridge counts in its intake records.
 */
async function countDelivery(
  options: IntakeOptions,
  msg: ConsumeMessage,
  job: BridgedJob,
  step: Step,
): Promise<number | null> {
  if (!msg.fields.redelivered) return null;
  const header = msg.properties.headers?.['x-delivery-count'] as unknown;
  if (typeof header === 'number' && Number.isInteger(header) && header >= 0) return header + 1;
  return step('counting deliveries', () => options.records.countDelivery(job.fingerprint));
}

/** Whether task `name` is in its world already (queued by an earlier delivery). */
async function exists(options: IntakeOptions, job: BridgedJob, name: string): Promise<boolean> {
  const world = job.kind === 'race' ? raceWorld(options.world) : options.world;
  return (await options.coordinator().exists(`${worldRoot(world)}/${name}`)) !== null;
}

/**
 * Queues the job exactly once for this message: under the intake record an earlier delivery
 * left (a redelivery adopts it, and queues its task only when it is not queued yet), or under
 * a record of its own with a new task. The record goes before the message is acknowledged;
 * if another delivery took it over meanwhile (this session was lost), that one counts the
 * task as its own, and this message gets a new one.
 */
async function queueOnce(
  options: IntakeOptions,
  msg: ConsumeMessage,
  job: BridgedJob,
  step: Step,
): Promise<{ task: string; outcome: 'queued' | 'duplicate' }> {
  const fp = job.fingerprint;
  let adopted: IntakeRecord | null = msg.fields.redelivered
    ? await step('looking for an earlier delivery', () =>
        options.records.adopt(fp, () => !options.stopped()),
      )
    : null;
  for (;;) {
    const record =
      adopted ??
      (await step('opening the intake record', () =>
        options.records.open(fp, freshTaskName(job.kind, fp)),
      ));
    let outcome: 'queued' | 'duplicate' = 'queued';
    try {
      await options.beforeQueued?.(record.task);
      if (adopted && (await step('finding the task', () => exists(options, job, record.task))))
        outcome = 'duplicate';
      else
        await step('queueing the job', () => submit(options, job, record.task, traceHeaders(msg)));
      await options.afterQueued?.(record.task);
    } catch (err) {
      if (err instanceof Refused) await options.records.close(record).catch(() => false);
      else if (err instanceof Abandoned) await options.records.release(record);
      throw err;
    }
    if (await step('removing the intake record', () => options.records.close(record)))
      return { task: record.task, outcome };
    options.logger.warn(
      { task: record.task, queue: msg.fields.routingKey },
      'intake record taken over by a redelivery; queueing a new task for this message',
    );
    adopted = null;
  }
}

/**
 * Submits the job as task `name`: its result address is the bridge's, its world must exist.
 * Its queue span goes under the publisher's span, when the message names one.
 */
async function submit(
  options: IntakeOptions,
  job: BridgedJob,
  name: string,
  producer: TraceCarrier | undefined,
): Promise<void> {
  const coordinator = options.coordinator();
  const data = job.address
    ? { ...job.job, exchange: BRIDGE_EXCHANGE, routingkey: options.world }
    : job.job;
  const queue = async () => {
    if (job.kind === 'race')
      await submitRace(coordinator, data, {
        world: options.world,
        name,
        engine: options.engines.race,
      });
    else
      await submitJob(coordinator, data, {
        world: options.world,
        name,
        engine: options.engines.regular,
        createWorld: false,
      });
  };
  const telemetry = options.telemetry;
  const from = telemetry && producer ? telemetry.contextManager.extract(producer) : undefined;
  await (telemetry && from !== undefined ? telemetry.contextManager.with(from, queue) : queue());
}
