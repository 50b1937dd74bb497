import { ENVELOPE } from './constants.js';
import type { AmqpAddress } from './message.js';
import { yothalotTime } from './time.js';

/** A result ready for RabbitMQ: where it goes and its JSON body. */
export interface OutgoingResult {
  address: AmqpAddress;
  body: Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `started`/`finished` of one record in Yothalot's time format. */
function withTimes(record: Record<string, unknown>): Record<string, unknown> {
  const out = { ...record };
  for (const key of ['started', 'finished'] as const)
    if (key in out) out[key] = yothalotTime(out[key]);
  return out;
}

/** A result with its times (`started`/`finished`, and a race winner's) in Yothalot's form. */
export function withYothalotTimes(result: Record<string, unknown>): Record<string, unknown> {
  const body = withTimes(result);
  if (isRecord(body.winner)) body.winner = withTimes(body.winner);
  return body;
}

/**
 * Turns a result as the worker recorded it into the message Yothalot's consumers read:
 * the producer's `exchange`/`routingkey` put back from the envelope (which is removed),
 * times as `YYYY-MM-DD HH:MM:SS` (UTC) at the top and in a race's `winner`. Everything else
 * (`exit` only on a normal end, `signal` only when killed, `truncated`, custom properties)
 * is already in the spec's shape. `null` when the result carries no envelope (not the
 * bridge's to forward).
 */
export function amqpResult(result: unknown): OutgoingResult | null {
  if (!isRecord(result)) return null;
  const { [ENVELOPE]: envelope, exchange: _ex, routingkey: _rk, ...rest } = result;
  if (!isRecord(envelope) || typeof envelope.routingkey !== 'string') return null;
  const address: AmqpAddress = {
    routingkey: envelope.routingkey,
    ...(typeof envelope.exchange === 'string' ? { exchange: envelope.exchange } : {}),
  };
  return { address, body: withYothalotTimes({ ...rest, ...address }) };
}
