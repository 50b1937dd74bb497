// Handlers module for the chaos run, loaded by the real worker daemon (`--handlers`).
// Every execution appends one `start` line and one `finish` (or `abort`) line to the shared
// event log. appendFileSync opens the file with O_APPEND, so lines of concurrent worker
// processes never interleave inside a line.
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';

const LOG = process.env.ZOOTT_CHAOS_LOG;
const TASK_MS = Number(process.env.ZOOTT_CHAOS_TASK_MS ?? '100');
if (!LOG) throw new Error('chaos handlers: ZOOTT_CHAOS_LOG is not set');

function record(event, key, exec) {
  appendFileSync(
    LOG,
    `${JSON.stringify({ event, key, exec, pid: process.pid, time: Date.now() })}\n`,
  );
}

function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** One chaos task: runs for about TASK_MS (jittered), then returns who ran it. */
export async function chaos(task) {
  const key = task.key.join('|');
  const exec = randomUUID();
  record('start', key, exec);
  try {
    await pause(Math.round(TASK_MS * (0.5 + Math.random())), task.signal);
  } catch (err) {
    record('abort', key, exec);
    throw err;
  }
  record('finish', key, exec);
  return { exec, pid: process.pid };
}
