import { isZoottError, type TaskContext, ZoottError } from '@zoott/core';
import { encodeJson } from '@zoott/core/internal';
import { buildRaceResult, type ProcessRun, type RaceJob } from '@zoott/core/jobs';
import { runRacer } from '../jobs/index.js';
import { type HandlerContext, holding } from './options.js';
import { createOnce, RacePaths, type RacerData, readJson, type WinnerData } from './race-state.js';

/** What a racer task records as its own (small) result. */
export interface RacerOutcomeRecord {
  race: string;
  index: number;
  /** `won`, `lost` (ended normally and silently), `stopped` (killed: the race was over), `skipped`. */
  outcome: 'won' | 'lost' | 'stopped' | 'skipped';
  pid?: number;
}

function racerData(data: unknown): RacerData {
  const fields = data as Partial<RacerData> | null;
  if (
    typeof fields !== 'object' ||
    fields === null ||
    typeof fields.race !== 'string' ||
    !Number.isInteger(fields.index) ||
    typeof fields.executable !== 'string' ||
    !Array.isArray(fields.arguments) ||
    typeof fields.data !== 'string'
  )
    throw new ZoottError(
      'INVALID_JOB',
      'racer task data must be {race, index, executable, arguments, data} (racers are queued by a race coordinator)',
      { field: 'data' },
    );
  return fields as RacerData;
}

/** The winner's complete run, written into the race's winner node beside who won. */
async function recordWin(
  handlerContext: HandlerContext,
  paths: RacePaths,
  racer: RacerData,
  run: ProcessRun & { stdin: string },
): Promise<void> {
  const stub = { executable: racer.executable, arguments: racer.arguments, input: [] } as RaceJob;
  const record = buildRaceResult(
    stub,
    { winner: run, processes: 0, started: run.started, finished: run.finished },
    { maxBytes: handlerContext.maxResultBytes },
  ).winner!;
  const prior = (await readJson<WinnerData>(handlerContext.c, paths.winner)) ?? {
    index: racer.index,
    at: new Date().toISOString(),
  };
  await handlerContext.c.set(paths.winner, encodeJson({ ...prior, record } satisfies WinnerData));
}

/**
 * Handler of `zoott.racer`: runs one racer of a race unless the race is already over.
 * When its process writes output or ends abnormally it tries to create the race's winner
 * node; the one create that succeeds wins, and every other racer, watching that node,
 * kills its process group. The winner records its complete run in the winner node.
 */
export async function runRacerTask(
  handlerContext: HandlerContext,
  task: TaskContext,
): Promise<RacerOutcomeRecord> {
  const racerFields = racerData(task.data);
  const paths = new RacePaths(handlerContext.world, racerFields.race);
  const coordinator = handlerContext.c;
  const done = (outcome: RacerOutcomeRecord['outcome'], pid?: number): RacerOutcomeRecord => ({
    race: racerFields.race,
    index: racerFields.index,
    outcome,
    ...(pid !== undefined ? { pid } : {}),
  });

  const current = await readJson<WinnerData>(coordinator, paths.winner);
  // A winner whose worker died before recording its run is run again by whoever claims it.
  const rerunOfWinner = current !== null && current.index === racerFields.index && !current.record;
  if (current !== null && !rerunOfWinner) return done('skipped');
  const racer = runRacer(racerFields.executable, racerFields.arguments, racerFields.data, {
    serverName: handlerContext.serverName,
    cwd: handlerContext.workDir,
    env: handlerContext.env,
    maxOutputBytes: handlerContext.maxOutputBytes,
    killGraceMs: handlerContext.killGraceMs,
    ...(racerFields.nonZeroExitWins === true ? { normalExitCodes: [0] } : {}),
    allowExec: handlerContext.policy,
    ...(handlerContext.runAs ? { runAs: handlerContext.runAs } : {}),
    ...holding(handlerContext),
  });
  let stoppedByRace = false;
  const stop = () => {
    stoppedByRace = true;
    racer.kill();
  };
  // Kill when someone else wins (or the coordinator ends the race).
  const check = () => {
    readJson<WinnerData>(coordinator, paths.winner).then(
      (winner) => {
        if (winner === null) {
          void arm(); // deleted: the race was cleaned up; look again (it stops us if gone)
          return;
        }
        if (winner.index !== racerFields.index) stop();
      },
      () => undefined,
    );
  };
  const arm = async () => {
    try {
      const stat = await coordinator.exists(paths.winner, { watch: check });
      if (stat !== null) check();
      else if ((await coordinator.exists(paths.base)) === null) stop();
    } catch {
      // Session trouble: the abort signal stops the racer if the session is lost.
    }
  };
  if (!rerunOfWinner) void arm();
  // A lost session: the claim is gone, another worker may start this racer any moment.
  const onAbort = () =>
    racer.kill({ immediate: isZoottError(task.signal.reason, 'SESSION_EXPIRED') });
  task.signal.addEventListener('abort', onAbort, { once: true });
  if (task.signal.aborted) onAbort();
  const timer =
    racerFields.timeoutMs !== undefined || handlerContext.timeoutMs !== undefined
      ? setTimeout(
          stop,
          Math.min(
            racerFields.timeoutMs ?? handlerContext.timeoutMs!,
            handlerContext.timeoutMs ?? racerFields.timeoutMs!,
          ),
        )
      : undefined;

  const pid = await racer.pid;
  if (pid > 0) handlerContext.processes?.started(pid);
  try {
    // Counted once it really runs: `processes` of the race is the number of these nodes.
    if (pid > 0) {
      try {
        await coordinator.create(`${paths.started}/p-`, undefined, { sequential: true });
      } catch (err) {
        racer.kill({ immediate: true });
        await racer.done;
        if (isZoottError(err, 'NO_NODE')) return done('skipped'); // the race is gone
        throw err;
      }
    }
    const outcome = await racer.outcome;
    let won = rerunOfWinner;
    if (!won && outcome.result === 'won' && !stoppedByRace && !task.signal.aborted) {
      const claim: WinnerData = {
        index: racerFields.index,
        worker: handlerContext.workerId,
        server: handlerContext.serverName,
        pid,
        at: new Date().toISOString(),
      };
      won = await createOnce(coordinator, paths.winner, claim).catch((err) => {
        racer.kill();
        throw err;
      });
      if (!won) stop();
    }
    const run = await racer.done;
    if (task.signal.aborted)
      throw new ZoottError('ABORTED', 'racer aborted; its process group was stopped');
    if (won) await recordWin(handlerContext, paths, racerFields, run);
    const result = won ? 'won' : outcome.result === 'lost' && !stoppedByRace ? 'lost' : 'stopped';
    await createOnce(coordinator, `${paths.ended}/${racerFields.index}`, {
      outcome: result,
      pid,
    }).catch((err) => {
      if (!isZoottError(err, 'NO_NODE')) throw err;
    });
    return done(result, pid);
  } finally {
    if (timer) clearTimeout(timer);
    task.signal.removeEventListener('abort', onAbort);
    if (pid > 0) handlerContext.processes?.ended(pid);
  }
}
