import { createHash } from 'node:crypto';
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
  /** Task name derived from the message: a redelivery finds its task already queued. */
  name: string;
  /** The job as queued: its own address replaced by the bridge's envelope. */
  job: RegularJob | RaceJob;
  /** The producer's result address, or `null` (no routing key: nothing is published). */
  address: AmqpAddress | null;
}

/**
 * The task name of a message: from its AMQP `message-id` when the producer set one (two
 * messages with one id are one job), else from its body (a redelivery has the same body).
 * The queue kind is part of it, so a regular and a race job never share a name.
 */
export function taskNameOf(kind: JobKind, body: Uint8Array, messageId?: string): string {
  const hash = createHash('sha256').update(kind).update('\0');
  if (messageId !== undefined && messageId !== '') hash.update('id\0').update(messageId);
  else hash.update('body\0').update(body);
  return `${TASK_PREFIX}${kind === 'race' ? 'race' : 'job'}-${hash.digest('hex').slice(0, 40)}`;
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
    name: taskNameOf(kind, body, messageId),
    job: queued as RegularJob | RaceJob,
    address,
  };
}

/** The reason a message is malformed, or `null` when the error is not about the message. */
export function malformedReason(err: unknown): string | null {
  return isZoottError(err, 'INVALID_JOB') ? (err as Error).message : null;
}
