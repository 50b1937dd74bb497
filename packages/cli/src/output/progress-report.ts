import type { TaskProgress } from '@zoott/core';

/** A progress value for people: a fraction in [0, 1] as a percentage, anything else as JSON. */
export function formatProgressValue(value: unknown): string {
  if (typeof value === 'number' && value >= 0 && value <= 1)
    return `${Math.round(value * 1000) / 10}%`;
  return JSON.stringify(value);
}

/**
 * Remembers how many log lines of each task were shown, so a stream of progress reports
 * (each carrying the last lines) prints every line once. Lines that fell out of the kept
 * window between two reports are counted, not shown.
 */
export class LogCursor {
  private readonly shown = new Map<string, { total: number; attempt: number; value: string }>();

  /** The new lines of `progress` for task `key`, how many were missed, and whether the value changed. */
  next(
    key: string,
    progress: TaskProgress,
  ): { lines: TaskProgress['log']; missed: number; valueChanged: boolean } {
    const before = this.shown.get(key);
    const fresh = !before || before.attempt !== progress.attempt;
    const total = progress.dropped + progress.log.length;
    const from = fresh ? 0 : before.total;
    const skip = Math.max(0, from - progress.dropped);
    const missed = Math.max(0, progress.dropped - from) - (fresh ? progress.dropped : 0);
    const value = progress.progress === undefined ? '' : JSON.stringify(progress.progress);
    this.shown.set(key, { total, attempt: progress.attempt, value });
    return {
      lines: progress.log.slice(skip),
      missed: Math.max(0, missed),
      valueChanged: value !== '' && (fresh || before.value !== value),
    };
  }
}
