/** `1.2 s`, `340 ms`, `2 min 5 s`, `3 h 20 min` */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/** ISO time of a ms timestamp, or `-`. */
export function formatTime(ms: number | undefined): string {
  return ms === undefined ? '-' : new Date(ms).toISOString();
}

/**
 * A task's failure as one line, `CODE: message` (a ZoottError's message already starts with
 * its code, which is then not said twice).
 */
export function formatTaskError(error: { code: string; message: string }): string {
  return error.message.startsWith(`${error.code}:`)
    ? error.message
    : `${error.code}: ${error.message}`;
}
