import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { isZoottError, type TaskContext, ZoottError } from '@zoott/core';
import { decodeJson, encodeJson } from '@zoott/core/internal';
import {
  buildRaceResult,
  type RaceInput,
  type RaceJob,
  type RaceJobResult,
  validateRaceJob,
} from '@zoott/core/jobs';
import { deleteTree } from '@zoott/core/recipes';
import { RACER_TYPE } from '../constants.js';
import { effectiveTimeout } from '../jobs/index.js';
import { checkExecutable, type HandlerContext } from './options.js';
import {
  changeOrTimeout,
  createOnce,
  type RaceMeta,
  RacePaths,
  type RacerData,
  readJson,
  recordToRun,
  type WinnerData,
} from './race-state.js';

/** Name of racer `index` of race `race` (a top-level task, so it never waits for the race). */
export function racerName(race: string, index: number): string {
  return `${race}.${index}`;
}

/** Most racer tasks queued (or cancelled) at once. */
const BATCH = 16;

/**
 * Reads a race's input directory (relative to the data directory): every regular file in
 * it, in name order, one racer per line. Each racer gets its line (with the newline) on
 * stdin, and the file as its `filename` hint.
 */
export async function readRaceInputDir(dataDir: string, dir: string): Promise<RaceInput[]> {
  const root = resolve(dataDir);
  const full = resolve(root, dir);
  if (full !== root && !full.startsWith(root + sep))
    throw new ZoottError('INVALID_JOB', `input: ${JSON.stringify(dir)} leaves the data directory`, {
      field: 'input',
    });
  let names: string[];
  try {
    const entries = await readdir(full, { withFileTypes: true });
    names = entries
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort();
  } catch (err) {
    throw new ZoottError(
      'INVALID_JOB',
      `input: cannot read directory ${JSON.stringify(dir)} under the data directory (${(err as Error).message})`,
      { field: 'input', cause: err },
    );
  }
  const inputs: RaceInput[] = [];
  for (const name of names) {
    const text = await readFile(join(full, name), 'utf8');
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const filename = relative(root, join(full, name));
    for (const line of lines) inputs.push({ data: `${line}\n`, filename });
  }
  if (inputs.length === 0)
    throw new ZoottError(
      'INVALID_JOB',
      `input: directory ${JSON.stringify(dir)} holds no records`,
      {
        field: 'input',
      },
    );
  return inputs;
}

/**
 * Handler of `zoott.race`, the race's coordinator: queues one `zoott.racer` task per input
 * as independent top-level tasks of the worker world (so they never wait for this one),
 * waits until the race has a winner (or ended without one), and returns the race result.
 * See docs/protocol.md, "Jobs".
 */
export async function runRaceTask(h: HandlerContext, task: TaskContext): Promise<RaceJobResult> {
  const job: RaceJob = validateRaceJob(task.data);
  await checkExecutable(h, job.executable);
  const inputs = Array.isArray(job.input)
    ? job.input
    : await readRaceInputDir(h.dataDir, job.input);
  const c = h.c;
  const paths = new RacePaths(task.name);
  const meta = await openRace(h, paths, inputs.length);
  const engine = h.engine();

  // Queue the racers, skipping any a previous attempt already queued, until someone wins.
  for (let i = 0; i < inputs.length; i += BATCH) {
    if ((await c.exists(paths.winner)) !== null) break;
    await Promise.all(
      inputs.slice(i, i + BATCH).map(async (input, k) => {
        const index = i + k;
        const name = racerName(task.name, index);
        if ((await engine.task([name])) !== null) return;
        const data: RacerData = {
          race: task.name,
          index,
          executable: job.executable,
          arguments: job.arguments ?? [],
          data: input.data,
          ...(job.timeoutMs !== undefined ? { timeoutMs: job.timeoutMs } : {}),
        };
        const hints: { server?: string; filename?: string } = {};
        if (input.server !== undefined) hints.server = input.server;
        if (input.filename !== undefined) hints.filename = input.filename;
        await engine.queue({ name, type: RACER_TYPE, data }, null, null, {
          ...(Object.keys(hints).length > 0 ? { hints } : {}),
        });
      }),
    );
  }

  const timeoutMs = effectiveTimeout(job.timeoutMs, h.timeoutMs);
  const deadline =
    timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.parse(meta.started) + timeoutMs;
  const winner = await awaitOutcome(h, paths, inputs.length, deadline, task.signal);
  // Count after the started racers have ended: one that registered late is counted too.
  await racersEnded(h, paths, task.signal);
  const processes = (await c.children(paths.started)).length;
  const result = buildRaceResult(
    job,
    {
      winner: winner.record ? recordToRun(winner.record) : null,
      processes,
      started: new Date(meta.started),
      finished: new Date(),
    },
    { maxBytes: h.maxResultBytes },
  );
  if (winner.none === 'timeout') result.timedOut = true;
  await cleanUp(h, paths, task.name, inputs.length);
  return result;
}

/** Creates the race's nodes, or reads them back when a previous attempt made them. */
async function openRace(h: HandlerContext, paths: RacePaths, racers: number): Promise<RaceMeta> {
  const c = h.c;
  const fresh: RaceMeta = { started: new Date().toISOString(), racers, world: h.world };
  try {
    await c.create(paths.base, encodeJson(fresh));
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) {
      await createOnce(c, '/zoott_r', null).catch(() => false);
      await createOnce(c, '/zoott_r/races', null).catch(() => false);
      return openRace(h, paths, racers);
    }
    if (!isZoottError(err, 'NODE_EXISTS')) throw err;
  }
  await createOnce(c, paths.started, null);
  await createOnce(c, paths.ended, null);
  return (await readJson<RaceMeta>(c, paths.base)) ?? fresh;
}

/**
 * Waits until the winner node holds a final verdict: a winner's record, or `none`. When
 * every racer has ended without winning, or the deadline passes, this coordinator tries
 * to create the node itself with `none`; a racer may still win that create, and then its
 * record is awaited as usual.
 */
async function awaitOutcome(
  h: HandlerContext,
  paths: RacePaths,
  racers: number,
  deadline: number,
  signal: AbortSignal,
): Promise<WinnerData> {
  const c = h.c;
  for (;;) {
    if (signal.aborted) throw new ZoottError('ABORTED', 'race coordinator aborted');
    const { wake, wait } = changeOrTimeout(c, Math.min(deadline - Date.now(), 5000), signal);
    let winner: WinnerData | null = null;
    try {
      const got = await c.get(paths.winner, { watch: wake });
      winner = decodeJson<WinnerData>(got.data, paths.winner);
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
      await c.exists(paths.winner, { watch: wake });
    }
    if (winner && (winner.record || winner.none)) return winner;
    if (!winner) {
      const ended = await c.children(paths.ended, { watch: wake });
      const none = ended.length >= racers ? 'silent' : Date.now() >= deadline ? 'timeout' : null;
      if (none) {
        await createOnce(c, paths.winner, {
          at: new Date().toISOString(),
          none,
        } satisfies WinnerData);
        continue;
      }
    }
    await wait;
  }
}

/** After the verdict: waits (for a bounded time) until every started racer has ended. */
async function racersEnded(
  h: HandlerContext,
  paths: RacePaths,
  signal: AbortSignal,
): Promise<void> {
  const c = h.c;
  const until = Date.now() + h.killGraceMs + 5000;
  while (Date.now() < until && !signal.aborted) {
    const { wake, wait } = changeOrTimeout(c, until - Date.now(), signal);
    const ended = await c.children(paths.ended, { watch: wake });
    const started = await c.children(paths.started, { watch: wake });
    if (ended.length >= started.length) break;
    await wait;
  }
}

/** Cancels every racer task (pending ones never run) and deletes the race's nodes. */
async function cleanUp(h: HandlerContext, paths: RacePaths, race: string, racers: number) {
  const engine = h.engine();
  for (let i = 0; i < racers; i += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, racers - i) }, (_, k) =>
        engine.cancel([racerName(race, i + k)]).catch((err) => {
          if (!isZoottError(err, 'NO_SUCH_TASK')) throw err;
        }),
      ),
    );
  }
  await deleteTree(h.c, paths.base);
}
