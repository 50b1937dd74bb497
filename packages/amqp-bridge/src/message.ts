import { createHash, randomBytes } from 'node:crypto';
import { isZoottError, ZoottError } from '@zoott/core';
import { parseRaceJob, parseRegularJob, type RaceJob, type RegularJob } from '@zoott/core/jobs';
import { ENVELOPE, TASK_PREFIX } from './constants.js';

/** Which queue a message came from. */
export type JobKind = 'regular' | 'race';

/** Where the producer asked the result to go. */
export interface AmqpAddress {
  exchange?: string;
  routingkey: string;
}

/** A message turned into what the bridge queues. */
export interface BridgedJob {
  kind: JobKind;
  /**
   * What identifies the message's content (its kind, `message-id` and body): every delivery
   * of one message has it, and so do identical posts. It finds the intake record an earlier
   * delivery of a redelivered message left; it never names a task.
   */
  fingerprint: string;
  /** The job as queued: its own address replaced by the bridge's envelope. */
  job: RegularJob | RaceJob;
  /** The producer's result address, or `null` (no routing key: nothing is published). */
  address: AmqpAddress | null;
}

/**
 * The fingerprint of a message: a SHA-256 of its kind, `message-id` (when set) and body, in
 * hex. Identical posts share it; that is why it only finds intake records and never names a
 * task (see {@link freshTaskName}).
 */
export function fingerprintOf(kind: JobKind, body: Uint8Array, messageId?: string): string {
  const hash = createHash('sha256').update(kind).update('\0');
  if (messageId !== undefined && messageId !== '') hash.update('id\0').update(messageId);
  hash.update('\0body\0').update(body);
  return hash.digest('hex').slice(0, 32);
}

/**
 * A new task name for a message delivered for the first time: the fingerprint's start (so
 * the tasks of identical posts are easy to tell together) and 64 random bits, so two
 * deliveries never share a task. A redelivery finds the name its first delivery chose in
 * the intake record, not by recomputing it.
 */
export function freshTaskName(kind: JobKind, fingerprint: string): string {
  const kindPart = kind === 'race' ? 'race' : 'job';
  return `${TASK_PREFIX}${kindPart}-${fingerprint.slice(0, 12)}-${randomBytes(8).toString('hex')}`;
}

/**
 * Parses and validates one message. The job's `exchange` and `routingkey` are moved into
 * the {@link ENVELOPE} property (the caller gives the job the bridge's own reply address).
 *
 * @throws ZoottError INVALID_JOB naming what is wrong (not JSON, a missing executable, a
 * wrong type, the envelope property set by the producer).
 */
export function bridgedJob(kind: JobKind, body: Uint8Array, messageId?: string): BridgedJob {
  const job: RegularJob | RaceJob = kind === 'race' ? parseRaceJob(body) : parseRegularJob(body);
  if (ENVELOPE in job)
    throw new ZoottError('INVALID_JOB', `${ENVELOPE}: is reserved for the AMQP bridge`, {
      field: ENVELOPE,
    });
  const { exchange, routingkey, ...rest } = job;
  const address: AmqpAddress | null =
    routingkey === undefined
      ? null
      : { routingkey, ...(exchange !== undefined ? { exchange } : {}) };
  const queued =
    address === null
      ? // Nothing is published: an exchange without a routing key is echoed as it was.
        { ...rest, ...(exchange !== undefined ? { exchange } : {}) }
      : { ...rest, [ENVELOPE]: address };
  return {
    kind,
    fingerprint: fingerprintOf(kind, body, messageId),
    job: queued as RegularJob | RaceJob,
    address,
  };
}

/**
 * What can still be read from a message the bridge refuses (malformed, or refused by the
 * engine): its JSON object and the address it names, when it names one a result can go to
 * (`routingkey` a string, `exchange` a string or absent). `null` otherwise: such a message is
 * dead-lettered, since nobody can be answered.
 */
export function readableAddress(
  body: Uint8Array,
): { raw: Record<string, unknown>; address: AmqpAddress } | null {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const raw = value as Record<string, unknown>;
  if (typeof raw.routingkey !== 'string') return null;
  if (raw.exchange !== undefined && typeof raw.exchange !== 'string') return null;
  return {
    raw,
    address: {
      routingkey: raw.routingkey,
      ...(raw.exchange !== undefined ? { exchange: raw.exchange as string } : {}),
    },
  };
}

/** Longest exchange name and routing key AMQP 0-9-1 carries (a short string), in bytes. */
export const AMQP_NAME_MAX_BYTES = 255;

/**
 * Why no result can be published to `address` (`null` when one can): the exchange is not one
 * `allowed` accepts (the `--reply-exchanges` setting), or the exchange name or routing key
 * is longer than AMQP carries.
 */
export function addressProblem(
  address: AmqpAddress,
  allowed: (exchange: string) => boolean,
): string | null {
  const exchange = address.exchange ?? '';
  if (!allowed(exchange))
    return exchange === ''
      ? 'the default exchange ("") is not one of --reply-exchanges'
      : `exchange ${JSON.stringify(exchange)} is not one of --reply-exchanges`;
  for (const [field, value] of [
    ['exchange', exchange],
    ['routingkey', address.routingkey],
  ] as const) {
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > AMQP_NAME_MAX_BYTES)
      return `${field} is ${bytes} bytes, more than the ${AMQP_NAME_MAX_BYTES} bytes AMQP carries`;
  }
  return null;
}

/** The reason a message is malformed, or `null` when the error is not about the message. */
export function malformedReason(err: unknown): string | null {
  return isZoottError(err, 'INVALID_JOB') ? (err as Error).message : null;
}
