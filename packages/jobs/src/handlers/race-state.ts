import { type Coordinator, isZoottError } from '@zoott/core';
import { decodeJson, encodeJson } from '@zoott/core/internal';
import type { ProcessRecord, ProcessRun } from '@zoott/core/jobs';
import { racesRoot } from '../constants.js';

/**
 * A race's shared state (docs/protocol.md, "Jobs"), in its world's node of the race area:
 * `/zoott_~races/<world>/<race>`  meta {started, racers, world}
 * `.../started/p-<seq>`           one sequential node per racer process started
 * `.../ended/<index>`             one node per racer whose process ended
 * `.../winner`                    created once: the first create wins the race
 */
export class RacePaths {
  readonly base: string;
  readonly started: string;
  readonly ended: string;
  readonly winner: string;
  constructor(world: string, race: string) {
    this.base = `${racesRoot(world)}/${race}`;
    this.started = `${this.base}/started`;
    this.ended = `${this.base}/ended`;
    this.winner = `${this.base}/winner`;
  }
}

export interface RaceMeta {
  started: string;
  racers: number;
  world: string;
}

/**
 * Data of the winner node. A racer creates it with its index when it wins, and sets
 * `record` once its process has ended. The coordinator creates it with `none` when the
 * race ends without a winner (every racer ended normally and silently, or the race timed
 * out): either way one create decides, and every racer stops when it appears.
 */
export interface WinnerData {
  index?: number;
  worker?: string;
  server?: string;
  pid?: number;
  at: string;
  record?: ProcessRecord;
  none?: 'silent' | 'timeout';
}

/** What a racer task carries. */
export interface RacerData {
  race: string;
  index: number;
  executable: string;
  arguments: string[];
  data: string;
  timeoutMs?: number;
  /** The race job's `nonZeroExitWins`: a non-zero exit is an abnormal end, and wins. */
  nonZeroExitWins?: boolean;
}

export async function readJson<T>(coordinator: Coordinator, path: string): Promise<T | null> {
  try {
    const got = await coordinator.get(path);
    return decodeJson<T>(got.data, path);
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) return null;
    throw err;
  }
}

/** Creates a node; `false` when it already exists (someone else created it first). */
export async function createOnce(
  coordinator: Coordinator,
  path: string,
  data: unknown,
): Promise<boolean> {
  try {
    await coordinator.create(path, encodeJson(data));
    return true;
  } catch (err) {
    if (isZoottError(err, 'NODE_EXISTS')) return false;
    throw err;
  }
}

/** A stored process record back as the run the result builders take. */
export function recordToRun(record: ProcessRecord): ProcessRun & { stdin: string } {
  const run: ProcessRun & { stdin: string } = {
    stdin: record.stdin,
    stdout: record.stdout,
    stderr: record.stderr,
    server: record.server,
    pid: record.pid,
    started: new Date(record.started),
    finished: new Date(record.finished),
  };
  if (record.signal !== undefined) run.signal = record.signal;
  else run.exit = record.exit;
  if (record.truncated) run.truncated = true;
  if (record.timedOut) run.timedOut = true;
  if (record.error !== undefined) run.error = record.error;
  return run;
}

/**
 * Resolves when `arm` reports a change through its watch callback, after `ms`, when the
 * signal aborts or the session changes (a new session has none of the old watches).
 */
export function changeOrTimeout(
  coordinator: Coordinator,
  ms: number,
  signal: AbortSignal,
): { wake: () => void; wait: Promise<void> } {
  let wake!: () => void;
  const wait = new Promise<void>((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      off();
      signal.removeEventListener('abort', finish);
      resolve();
    };
    const timer = setTimeout(finish, Math.max(1, Math.min(ms, 2 ** 31 - 1)));
    const off = coordinator.onSession((event) => {
      if (event.type !== 'suspended') finish();
    });
    signal.addEventListener('abort', finish, { once: true });
    wake = finish;
  });
  return { wake, wait };
}
