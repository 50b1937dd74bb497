import { createHash } from 'node:crypto';
import type { Handlers, TaskContext } from '@zoott/core';

/** Small deterministic numbers per name, so every run looks the same. */
export function hashOf(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0);
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/**
 * In-process handlers of the two simulated steps. Every 7th download fails its first
 * attempt (a simulated mirror timeout), so the demo shows retries with backoff.
 */
export function sampleHandlers(): Handlers {
  return {
    requestFile: async (t: TaskContext) => {
      await pause(20 + (hashOf(t.name) % 60), t.signal);
      return { url: (t.data as { url?: string } | null)?.url, status: 200 };
    },
    downloadFile: async (t: TaskContext) => {
      await pause(40 + (hashOf(t.name) % 120), t.signal);
      const item = t.name.slice(t.name.indexOf('_') + 1);
      if (t.attempt === 1 && Number(item.slice(1)) % 7 === 3)
        throw new Error(`mirror timed out fetching ${item} (simulated)`);
      return { bytes: 1000 + (hashOf(t.name) % 9000), attempt: t.attempt };
    },
  };
}
