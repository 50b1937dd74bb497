import { setFlagsFromString } from 'node:v8';
import { ZoottError } from '@zoott/core';

/**
 * The worker's default heap room (`--heap-room`), in percent of the live heap. A worker
 * allocates fast and keeps little (a busy one about 10-25 MB live), and V8 left to itself
 * lets such a process gather up to three times its live data in garbage between full
 * collections: a million-task run grew a worker to 250 MB of RSS on 16-30 MB of live heap.
 * Half the live data is room enough for collections to stay rare.
 */
export const DEFAULT_HEAP_ROOM = 50;

/**
 * Bounds the garbage this process's JavaScript heap may gather between full collections to
 * `percent` of its live data (V8's heap growing factor; it is not a limit: the heap still
 * grows with what is live). 0 leaves V8's own choice. Process-wide, so it is for the program
 * that owns the process (zoott-worker applies its `--heap-room` setting), not for a library.
 *
 * @throws ZoottError INVALID_CONFIG when `percent` is not a whole number >= 0.
 */
export function applyHeapRoom(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0)
    throw new ZoottError(
      'INVALID_CONFIG',
      `heapRoom: must be a whole number >= 0 (percent), got ${JSON.stringify(percent)}`,
      { field: 'heapRoom' },
    );
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
