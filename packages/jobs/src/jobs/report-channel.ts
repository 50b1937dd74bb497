import type { Readable } from 'node:stream';

/** The file descriptor a job writes its progress and log lines to. */
export const REPORT_FD = 3;
/** Longest report line read; the rest of a longer line is dropped. */
export const MAX_REPORT_LINE = 8192;

/** One line of the report channel, understood. */
export type Report = { progress: unknown } | { log: string };

/**
 * A job's report line: `progress <JSON>` (a number such as 0.4, or any small JSON) or
 * `log <text>`. Anything else, and a `progress` line whose value is not JSON, is taken as a
 * log line as it stands, so a job's stray output on the channel is shown, not lost.
 */
export function parseReport(line: string): Report | null {
  const text = line.replace(/\r$/, '');
  if (text.trim() === '') return null;
  const match = /^(progress|log)(?:\s+(.*))?$/s.exec(text);
  if (match?.[1] === 'log') return { log: match[2] ?? '' };
  if (match?.[1] === 'progress' && match[2] !== undefined) {
    try {
      return { progress: JSON.parse(match[2]) };
    } catch {
      // Not JSON: keep the line as a log line.
    }
  }
  return { log: text };
}

/** Calls `onLine` for every line read from `stream` (cut at {@link MAX_REPORT_LINE}). */
export function readLines(stream: Readable, onLine: (line: string) => void): void {
  let buffered = '';
  let skipping = false;
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (!skipping) onLine(line.slice(0, MAX_REPORT_LINE));
      skipping = false;
    }
    if (buffered.length > MAX_REPORT_LINE) {
      if (!skipping) onLine(buffered.slice(0, MAX_REPORT_LINE));
      buffered = '';
      skipping = true;
    }
  });
  stream.on('end', () => {
    if (buffered && !skipping) onLine(buffered);
  });
  // A job that closes the channel early, or a reader destroyed after the grace: not an error.
  stream.on('error', () => {});
}
