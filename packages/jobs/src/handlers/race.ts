import { constants } from 'node:fs';
import { type FileHandle, open, readdir, readlink, realpath } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { isZoottError, PermanentError, type TaskContext, ZoottError } from '@zoott/core';
import { decodeJson, encodeJson, ensureWorldPath } from '@zoott/core/internal';
import {
  buildRaceResult,
  DEFAULT_JOB_LIMITS,
  type RaceInput,
  type RaceJob,
  type RaceJobResult,
  validateRaceJob,
} from '@zoott/core/jobs';
import { deleteTree } from '@zoott/core/recipes';
import { RACER_TYPE, racesRoot } from '../constants.js';
import { effectiveTimeout } from '../jobs/index.js';
import { aclText, worldAcl } from '../reply.js';
import {
  checkExecutable,
  checkResultFits,
  type HandlerContext,
  permanentIfTooLarge,
} from './options.js';
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
 *
 * Containment is decided on real paths, not on the text: the directory is opened first,
 * and the real path of what was opened (read back from the open descriptor, so a link
 * swapped after the check cannot redirect the read) must be the data directory's real
 * path or lie under it. Files are then read through that descriptor, without following
 * links, so a symlink in the directory is skipped rather than read. More records than
 * `maxRacers` (the cap of a listed input) are refused, INVALID_JOB, as soon as they are read.
 */
export async function readRaceInputDir(
  dataDir: string,
  dir: string,
  maxRacers = DEFAULT_JOB_LIMITS.maxRacers,
): Promise<RaceInput[]> {
  const leaves = (where: string) =>
    new ZoottError(
      'INVALID_JOB',
      `input: ${JSON.stringify(dir)} ${where}, outside the data directory`,
      { field: 'input' },
    );
  const unreadable = (err: unknown) =>
    new ZoottError(
      'INVALID_JOB',
      `input: cannot read directory ${JSON.stringify(dir)} under the data directory (${(err as Error).message})`,
      { field: 'input', cause: err },
    );
  const lexicalRoot = resolve(dataDir);
  if (!within(lexicalRoot, resolve(lexicalRoot, dir))) throw leaves('leaves the data directory');
  let root: string;
  try {
    root = await realpath(lexicalRoot);
  } catch (err) {
    throw unreadable(err);
  }
  let handle: FileHandle;
  try {
    handle = await open(resolve(root, dir), constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (err) {
    throw unreadable(err);
  }
  const inputs: RaceInput[] = [];
  try {
    const viaFd = `/proc/self/fd/${handle.fd}`;
    const real = await readlink(viaFd).catch(() => realpath(resolve(root, dir)));
    if (!within(root, real)) throw leaves(`resolves to ${real}`);
    let names: string[];
    try {
      const entries = await readdir(viaFd, { withFileTypes: true });
      names = entries
        .filter((e) => e.isFile())
        .map((e) => e.name)
        .sort();
    } catch (err) {
      throw unreadable(err);
    }
    for (const name of names) {
      const text = await readRegularFile(`${viaFd}/${name}`);
      if (text === null) continue; // replaced by a link or something else since the listing
      const lines = text.split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      const filename = relative(root, join(real, name));
      for (const line of lines) inputs.push({ data: `${line}\n`, filename });
      // The cap a listed input has: a directory of 12,000 records must not start 12,000
      // racers. Checked as the files are read, so a huge directory is not read to the end.
      if (inputs.length > maxRacers)
        throw new ZoottError(
          'INVALID_JOB',
          `input: directory ${JSON.stringify(dir)} holds more than the limit of ${maxRacers} records (one racer each)`,
          { field: 'input' },
        );
    }
  } finally {
    await handle.close();
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

/** Whether `path` is `root` or below it (both absolute and canonical). */
function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root === sep ? root : root + sep);
}

/** The text of a regular file, opened without following a link; `null` for anything else. */
async function readRegularFile(path: string): Promise<string | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') return null;
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) return null;
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Handler of `zoott.race`, the race's coordinator: queues one `zoott.racer` task per input
 * as independent top-level tasks of the worker world (so they never wait for this one),
 * waits until the race has a winner (or ended without one), and returns the race result.
 * See docs/protocol.md, "Jobs".
 */
export async function runRaceTask(
  handlerContext: HandlerContext,
  task: TaskContext,
): Promise<RaceJobResult> {
  const job: RaceJob = validateRaceJob(task.data);
  await checkExecutable(handlerContext, job.executable);
  checkResultFits(handlerContext, (run) =>
    buildRaceResult(
      job,
      { winner: { ...run, stdin: '' }, processes: 0, started: run.started, finished: run.finished },
      { maxBytes: handlerContext.maxResultBytes },
    ),
  );
  const inputs = Array.isArray(job.input)
    ? job.input
    : await readRaceInputDir(handlerContext.dataDir, job.input);
  const coordinator = handlerContext.c;
  const paths = new RacePaths(handlerContext.world, task.name);
  const meta = await openRace(handlerContext, paths, inputs.length).catch((err: unknown) => {
    // Race state locked to someone else: no retry will get past that either.
    if (isZoottError(err, 'NO_AUTH'))
      throw new PermanentError(
        `race state ${paths.base} is not accessible under this worker's credentials (${err.message}); remove it with the world's credentials`,
        'NO_AUTH',
      );
    throw err;
  });
  const engine = handlerContext.engine();

  // Queue the racers, skipping any a previous attempt already queued, until someone wins.
  for (let i = 0; i < inputs.length; i += BATCH) {
    if ((await coordinator.exists(paths.winner)) !== null) break;
    await Promise.all(
      inputs.slice(i, i + BATCH).map(async (input, offset) => {
        const index = i + offset;
        const name = racerName(task.name, index);
        if ((await engine.task([name])) !== null) return;
        const data: RacerData = {
          race: task.name,
          index,
          executable: job.executable,
          arguments: job.arguments ?? [],
          data: input.data,
          ...(job.timeoutMs !== undefined ? { timeoutMs: job.timeoutMs } : {}),
          ...(job.nonZeroExitWins ? { nonZeroExitWins: true } : {}),
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

  const timeoutMs = effectiveTimeout(job.timeoutMs, handlerContext.timeoutMs);
  const deadline =
    timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.parse(meta.started) + timeoutMs;
  const winner = await awaitOutcome(handlerContext, paths, inputs.length, deadline, task.signal);
  // Count after the started racers have ended: one that registered late is counted too.
  await racersEnded(handlerContext, paths, task.signal);
  const processes = (await coordinator.children(paths.started)).length;
  let result: RaceJobResult;
  try {
    result = buildRaceResult(
      job,
      {
        winner: winner.record ? recordToRun(winner.record) : null,
        processes,
        started: new Date(meta.started),
        finished: new Date(),
      },
      { maxBytes: handlerContext.maxResultBytes },
    );
  } catch (err) {
    await cleanUp(handlerContext, paths, task.name, inputs.length);
    throw permanentIfTooLarge(err, handlerContext.maxResultBytes);
  }
  if (winner.none === 'timeout') result.timedOut = true;
  await cleanUp(handlerContext, paths, task.name, inputs.length);
  return result;
}

/**
 * Creates the race's nodes, or reads them back when a previous attempt made them. The base
 * node carries the world's ACL, and a base that does not (someone else made it first, with
 * a planted winner, say) is refused for good: its verdict could be forged. The check comes
 * after the children exist, since a node with children cannot be deleted and re-made.
 */
async function openRace(
  handlerContext: HandlerContext,
  paths: RacePaths,
  racers: number,
): Promise<RaceMeta> {
  const coordinator = handlerContext.c;
  const acl = await worldAcl(coordinator, handlerContext.world);
  const fresh: RaceMeta = {
    started: new Date().toISOString(),
    racers,
    world: handlerContext.world,
  };
  try {
    await coordinator.create(paths.base, encodeJson(fresh), { acl });
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) {
      // `init` made the world's node of the race area; a world made by zoott 0.1.0 gets it
      // here, as `init` would make it.
      await ensureWorldPath(coordinator, racesRoot(handlerContext.world), acl);
      return openRace(handlerContext, paths, racers);
    }
    if (!isZoottError(err, 'NODE_EXISTS')) throw err;
  }
  await createOnce(coordinator, paths.started, null);
  await createOnce(coordinator, paths.ended, null);
  const actual = (await coordinator.getAcl(paths.base)).acl;
  if (aclText(actual) !== aclText(acl))
    throw new PermanentError(
      `race state ${paths.base} has ACL [${aclText(actual)}], not the world's [${aclText(acl)}]: its verdict could be forged, so the race is not run. Remove the node with the world's credentials and retry`,
      'NO_AUTH',
    );
  return (await readJson<RaceMeta>(coordinator, paths.base)) ?? fresh;
}

/**
 * Waits until the winner node holds a final verdict: a winner's record, or `none`. When
 * every racer has ended without winning, or the deadline passes, this coordinator tries
 * to create the node itself with `none`; a racer may still win that create, and then its
 * record is awaited as usual.
 */
async function awaitOutcome(
  handlerContext: HandlerContext,
  paths: RacePaths,
  racers: number,
  deadline: number,
  signal: AbortSignal,
): Promise<WinnerData> {
  const coordinator = handlerContext.c;
  for (;;) {
    if (signal.aborted) throw new ZoottError('ABORTED', 'race coordinator aborted');
    const { wake, wait } = changeOrTimeout(
      coordinator,
      Math.min(deadline - Date.now(), 5000),
      signal,
    );
    let winner: WinnerData | null = null;
    try {
      const got = await coordinator.get(paths.winner, { watch: wake });
      winner = decodeJson<WinnerData>(got.data, paths.winner);
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
      await coordinator.exists(paths.winner, { watch: wake });
    }
    if (winner && (winner.record || winner.none)) return winner;
    if (!winner) {
      const ended = await coordinator.children(paths.ended, { watch: wake });
      const none = ended.length >= racers ? 'silent' : Date.now() >= deadline ? 'timeout' : null;
      if (none) {
        await createOnce(coordinator, paths.winner, {
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
  handlerContext: HandlerContext,
  paths: RacePaths,
  signal: AbortSignal,
): Promise<void> {
  const coordinator = handlerContext.c;
  const until = Date.now() + handlerContext.killGraceMs + 5000;
  while (Date.now() < until && !signal.aborted) {
    const { wake, wait } = changeOrTimeout(coordinator, until - Date.now(), signal);
    const ended = await coordinator.children(paths.ended, { watch: wake });
    const started = await coordinator.children(paths.started, { watch: wake });
    if (ended.length >= started.length) break;
    await wait;
  }
}

/** Cancels every racer task (pending ones never run) and deletes the race's nodes. */
async function cleanUp(
  handlerContext: HandlerContext,
  paths: RacePaths,
  race: string,
  racers: number,
) {
  const engine = handlerContext.engine();
  for (let i = 0; i < racers; i += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, racers - i) }, (_, offset) =>
        engine.cancel([racerName(race, i + offset)]).catch((err) => {
          if (!isZoottError(err, 'NO_SUCH_TASK')) throw err;
        }),
      ),
    );
  }
  await deleteTree(handlerContext.c, paths.base);
}
