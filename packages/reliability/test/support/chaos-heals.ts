/**
 * What the partitioned worker did after each heal, judged from the moment it was back: its
 * session renewed (the daemon logs `session connected` or `session reconnected`), or, for a
 * process restarted meanwhile, the daemon serving again (`worker started`). Counting the
 * other workers' starts from the heal instead charged the worker for time that is not its
 * own: a daemon restarted into the partition exits UNREACHABLE and is restarted a second
 * later by the run (as by a service manager), and then takes a process start-up.
 */
import { readFileSync } from 'node:fs';
import type { ExecEvent, Fault } from './chaos-check.js';

/** A moment the partitioned slot's worker was back: a session again, or a new process serving. */
export interface Readiness {
  pid: number;
  time: number;
}

export interface Heal {
  healedAt: number;
  /** How long the window after the heal lasted: until the next partition or the work's end. */
  windowMs: number;
  /** First time the slot was back after the heal, in the window or after it; `null`: never. */
  backAt: number | null;
  /**
   * When the slot was back in the window and stayed up until it started a task (a process of
   * the slot killed before that is judged from its replacement's start); `null` when it was
   * not back before the window ended.
   */
  readyAt: number | null;
  /** The slot's first task start after `readyAt` (or since the heal, if that came first). */
  resumedAt: number | null;
  /** Tasks the other workers started from `readyAt` until `resumedAt` or the window's end. */
  othersStarted: number;
}

/** The moments a daemon's JSON log says it was back: a session event, or serving again. */
export function readinessIn(log: string): Readiness[] {
  const out: Readiness[] = [];
  for (const line of log.split('\n')) {
    // The log also holds plain lines (a daemon's last words on stderr).
    if (!line.startsWith('{')) continue;
    let entry: { pid?: unknown; time?: unknown; event?: unknown; msg?: unknown };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const back =
      entry.event === 'connected' ||
      entry.event === 'reconnected' ||
      entry.msg === 'worker started';
    if (back && typeof entry.pid === 'number' && typeof entry.time === 'number')
      out.push({ pid: entry.pid, time: entry.time });
  }
  return out;
}

/** {@link readinessIn} of a log file; none while the file does not exist yet. */
export function readinessOf(path: string): Readiness[] {
  try {
    return readinessIn(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
}

/** The heal of every partition, from the execution log, the faults and the slot's readiness. */
export function healsOf(o: {
  faults: readonly Fault[];
  events: readonly ExecEvent[];
  ready: readonly Readiness[];
  /** Every pid the partitioned slot ever had. */
  slotPids: ReadonlySet<number>;
  workDoneAt: number;
}): Heal[] {
  const partitions = o.faults.flatMap((f) => (f.kind === 'partition' ? [f] : []));
  const kills = o.faults.flatMap((f) =>
    f.kind === 'worker-kill' && o.slotPids.has(f.pid) ? [f.at] : [],
  );
  const starts = o.events.filter((e) => e.event === 'start');
  const mine = starts.filter((e) => o.slotPids.has(e.pid));
  const others = starts.filter((e) => !o.slotPids.has(e.pid));
  return partitions.map((p, i) => {
    const healedAt = p.to;
    const until = partitions[i + 1]?.from ?? o.workDoneAt;
    const backAt = o.ready.find((r) => r.time > healedAt)?.time ?? null;
    let since = healedAt;
    for (;;) {
      const ready = o.ready.find((r) => r.time > since && r.time < until);
      const resumed = mine.find((e) => e.time > since && e.time < until);
      const windowMs = until - healedAt;
      // Not back before the window ended: nothing to judge it by here (`backAt` says if ever).
      if (!ready)
        return { healedAt, windowMs, backAt, readyAt: null, resumedAt: null, othersStarted: 0 };
      const killed = kills.find((k) => k > ready.time && k < until);
      // Killed before its first start: its replacement is judged from when it is back.
      if (killed !== undefined && (!resumed || resumed.time > killed)) {
        since = killed;
        continue;
      }
      const end = resumed?.time ?? until;
      const othersStarted = others.filter((e) => e.time > ready.time && e.time < end).length;
      return {
        healedAt,
        windowMs,
        backAt,
        readyAt: ready.time,
        resumedAt: resumed?.time ?? null,
        othersStarted,
      };
    }
  });
}
