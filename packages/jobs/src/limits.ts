import { ZoottError } from '@zoott/core';

/**
 * The smallest `--max-output` (result cap) accepted. A job's result holds, besides its
 * output, the job's own fields and the run's: times (two ISO stamps, 48 bytes), pid, exit
 * or signal, the host name (up to 64 bytes on Linux) and, when the process could not run,
 * an `error` naming the executable. For a minimal job that is about 250 bytes; 1 KiB leaves
 * room for a short error and some output. Below it a result could not be recorded at all,
 * and every job would fail.
 */
export const MIN_OUTPUT_CAP_BYTES = 1024;

/**
 * The largest `--max-output` accepted: a result must fit in its completed record, which the
 * engine holds under 900 KiB (ZooKeeper's node limit is 1 MiB); 128 KiB are kept for the
 * record's own fields (name, type, worker, times). Above it a large result could never be
 * recorded, and its task would be retried to no end.
 */
export const MAX_OUTPUT_CAP_BYTES = 768 * 1024;

/**
 * Checks an output or result cap when the setting is read.
 *
 * @throws ZoottError INVALID_CONFIG naming the setting and the accepted range.
 */
export function checkOutputCap(value: number | undefined, field: string): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < MIN_OUTPUT_CAP_BYTES || value > MAX_OUTPUT_CAP_BYTES)
    throw new ZoottError(
      'INVALID_CONFIG',
      `${field}: must be ${MIN_OUTPUT_CAP_BYTES}..${MAX_OUTPUT_CAP_BYTES} bytes, got ${value} ` +
        `(${value < MIN_OUTPUT_CAP_BYTES ? `the smallest cap that holds a job result is ${MIN_OUTPUT_CAP_BYTES}` : `a larger result would not fit in its ZooKeeper record`})`,
      { field },
    );
}
