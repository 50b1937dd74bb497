import { createHash } from 'node:crypto';
import type { Handlers, TaskContext } from '@zoott/core';

/** Small deterministic numbers per name, so every run looks the same. */
export function hashOf(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0);
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
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
    requestFile: async (task: TaskContext) => {
      await pause(20 + (hashOf(task.name) % 60), task.signal);
      return { url: (task.data as { url?: string } | null)?.url, status: 200 };
    },
    downloadFile: async (task: TaskContext) => {
      await pause(40 + (hashOf(task.name) % 120), task.signal);
      const item = task.name.slice(task.name.indexOf('_') + 1);
      if (task.attempt === 1 && Number(item.slice(1)) % 7 === 3)
        throw new Error(`mirror timed out fetching ${item} (simulated)`);
      return { bytes: 1000 + (hashOf(task.name) % 9000), attempt: task.attempt };
    },
  };
}
