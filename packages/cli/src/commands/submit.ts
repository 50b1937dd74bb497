import { readFileSync } from 'node:fs';
import { type Coordinator, createEngine, type TaskKey, type TaskRecord } from '@zoott/core';
import { AREA } from '@zoott/core/internal';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ChildExitCode, ExitCode, signalExitCode } from '../exit-codes.js';
import { intOption } from '../input.js';
import { formatTaskError } from '../output/format.js';
import { keepSession, throughOutages, withDeadline } from '../ride-out.js';
import type { CommandBody } from '../runner.js';
import { showKey } from '../task-ref.js';
import type { Verb } from '../verb.js';

type SubmitOptions = import('@zoott/jobs').SubmitOptions;

interface SubmitFlags {
  wait?: boolean;
  timeout?: string;
  name?: string;
  priority?: string;
}

/** A job is a race when it has `input` (racers' stdin), else a regular job. */
export function isRaceJob(job: unknown): boolean {
  return typeof job === 'object' && job !== null && 'input' in job;
}

/**
 * The exit code a job's result stands for: the process's own exit code, 128+signal when a
 * signal ended it, 127 (the shell's "command not found") when it never started (its result
 * has no exit, only an `error`: not found, not allowed, not executable); for a race, the
 * winner's; 1 when no racer won.
 */
export function jobExitCode(result: unknown): number {
  if (typeof result !== 'object' || result === null) return ExitCode.FAILURE;
  const outcome = result as { exit?: unknown; signal?: unknown; winner?: unknown; error?: unknown };
  if ('winner' in outcome) return outcome.winner ? jobExitCode(outcome.winner) : ExitCode.FAILURE;
  if (typeof outcome.exit === 'number') return outcome.exit;
  if (typeof outcome.signal === 'number') return signalExitCode(outcome.signal);
  if (typeof outcome.error === 'string') return ChildExitCode.NOT_FOUND;
  return ExitCode.FAILURE;
}

/**
 * Waits until a task is completed or failed and returns its record; `null` when the
 * deadline or the signal comes first. No polling: each round arms exists watches on the
 * task's completed and failed records (one of them appears when the task ends) and sleeps
 * until one fires, the session changes (a lost session drops watches), the deadline passes
 * or the signal aborts; only then does it look again.
 */
export async function waitForTask(
  world: string,
  coordinator: Coordinator,
  key: TaskKey,
  deadline: number,
  signal: AbortSignal,
): Promise<TaskRecord | null> {
  const engine = createEngine(coordinator, { world });
  const stop = withDeadline(signal, deadline - Date.now());
  try {
    const { layout } = await engine.context();
    const ends = [layout.recordPath(AREA.completed, key), layout.recordPath(AREA.failed, key)];
    for (;;) {
      let wake!: () => void;
      const changed = new Promise<void>((resolve) => {
        wake = resolve;
      });
      // An outage is waited out (keepSession renews a lost session); the watches are armed
      // again on the next round.
      const rec = await throughOutages(coordinator, stop.signal, async () => {
        const stats = await Promise.all(
          ends.map((path) => coordinator.exists(path, { watch: () => wake() })),
        );
        if (!stats.some((stat) => stat !== null)) return null;
        return engine.task(key);
      }).catch((err: unknown) => {
        if (stop.signal.aborted) return null;
        throw err;
      });
      if (rec && (rec.state === 'completed' || rec.state === 'failed')) return rec;
      if (stop.signal.aborted || Date.now() >= deadline) return null;
      await sleepUntilChange(changed, deadline, stop.signal, coordinator);
    }
  } finally {
    stop.dispose();
  }
}

/** Resolves when `changed` does, the deadline passes, the signal aborts or the session changes. */
function sleepUntilChange(
  changed: Promise<void>,
  deadline: number,
  signal: AbortSignal,
  coordinator: Coordinator,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const finish = () => {
      if (timer !== undefined) clearTimeout(timer);
      off();
      signal.removeEventListener('abort', finish);
      resolve();
    };
    const left = deadline - Date.now();
    // An infinite deadline needs no timer (setTimeout would clamp it to 1 ms).
    const timer = Number.isFinite(left)
      ? setTimeout(finish, Math.min(Math.max(left, 0), 2 ** 31 - 1))
      : undefined;
    // A lost session took its watches and a closed one fails the next look: look again.
    // Not on `suspended`: requests would fail although the session may still recover.
    const off = coordinator.onSession((event) => {
      if (event.type !== 'suspended') finish();
    });
    signal.addEventListener('abort', finish, { once: true });
    void changed.then(finish);
  });
}

/**
 * Deletes the copy of `result` a job published on its reply path (when it named one), so a
 * later `zoott wait` does not hand out a result `submit --wait` already printed. Best effort:
 * a result another waiter took meanwhile is simply not there.
 */
async function consumeReply(
  coordinator: Coordinator,
  world: string,
  result: unknown,
): Promise<string | null> {
  const route = result as { routingkey?: unknown; exchange?: unknown } | null;
  if (typeof route !== 'object' || route === null || typeof route.routingkey !== 'string')
    return null;
  const { replyDir } = await import('@zoott/jobs');
  const dir = replyDir(
    typeof route.exchange === 'string'
      ? { routingkey: route.routingkey, exchange: route.exchange }
      : { routingkey: route.routingkey },
    world,
  );
  const want = JSON.stringify(result);
  const names = await coordinator.children(dir).catch(() => [] as string[]);
  for (const name of names) {
    const path = `${dir}/${name}`;
    const got = await coordinator.get(path).catch(() => null);
    if (!got) continue;
    let same = false;
    try {
      same = JSON.stringify(JSON.parse(Buffer.from(got.data).toString('utf8'))) === want;
    } catch {
      same = false;
    }
    if (!same) continue;
    await coordinator.delete(path, got.stat.version).catch(() => undefined);
    return path;
  }
  return null;
}

/**
 * `zoott submit job.json [--wait]`: queues a regular or race job (Yothalot JSON) for the
 * workers. With --wait, prints the result when it lands and exits with the job's own exit
 * code.
 */
const submitCommand: CommandBody = async (ctx, cmd: Command) => {
  const [file] = cmd.processedArgs as [string];
  const flags = cmd.opts<SubmitFlags>();
  let job: unknown;
  try {
    job = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EISDIR')
      throw new CliError(
        `${file} is a directory, not a job file`,
        ExitCode.USAGE,
        'give the JSON file of one job, e.g. zoott submit job.json (or - for stdin)',
      );
    if ((err as NodeJS.ErrnoException).code) throw err;
    throw new CliError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  const timeoutS = flags.timeout === undefined ? undefined : Number(flags.timeout);
  if (timeoutS !== undefined && !(timeoutS > 0))
    throw new CliError(`--timeout ${flags.timeout}: must be a positive number of seconds`);
  // Lazy: the job layer, @zoott/jobs (pino, prom-client), is only needed by the job verbs.
  const { submitJob, submitRace } = await import('@zoott/jobs');
  const race = isRaceJob(job);
  const submit = race ? submitRace : submitJob;
  const coordinator = await ctx.session().coordinator();
  const options: SubmitOptions = { world: ctx.world };
  if (flags.name) options.name = flags.name;
  const priority = intOption(flags.priority, '--priority', -999_999, 999_999);
  if (priority !== undefined) options.priority = priority;
  const sub = await submit(coordinator, job, options);
  const ref = { world: sub.world, key: showKey(sub.key), kind: race ? 'race' : 'job' };
  if (!flags.wait) {
    if (ctx.json) ctx.printJson(ref);
    else ctx.out(`submitted ${ref.kind} ${ref.key} to world ${sub.world}`);
    return ExitCode.OK;
  }
  if (!ctx.json)
    ctx.note(`submitted ${ref.kind} ${ref.key} to world ${sub.world}; waiting for the result...`);
  const deadline = timeoutS === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutS * 1000;
  const offSession = keepSession(coordinator, ctx.signal, (t) => ctx.note(t));
  const rec = await waitForTask(sub.world, coordinator, sub.key, deadline, ctx.signal).finally(
    offSession,
  );
  if (!rec) {
    if (ctx.signal.aborted) return ExitCode.INTERRUPTED;
    throw new CliError(
      `no result for ${ref.key} within ${timeoutS} s`,
      ExitCode.TIMEOUT,
      `it is still queued: \`zoott --world ${sub.world} show '${ref.key}'\``,
    );
  }
  if (rec.state === 'failed') {
    if (ctx.json) ctx.printJson({ ...ref, state: 'failed', error: rec.error });
    else
      ctx.note(
        `job ${ref.key} failed: ${rec.error ? formatTaskError(rec.error) : 'unknown error'}`,
      );
    return ExitCode.TASKS_FAILED;
  }
  // The result is printed here, so its copy on the reply path is taken too.
  // Replies are published under the job world's reply area (a race's too).
  await consumeReply(coordinator, ctx.world, rec.result).catch(() => null);
  if (ctx.json) ctx.printJson({ ...ref, state: 'completed', result: rec.result });
  else {
    type Run = { stdout?: unknown; stderr?: unknown; error?: unknown };
    const run = rec.result as Run & { winner?: Run | null };
    const out = race ? run.winner : run;
    if (typeof out?.stdout === 'string') process.stdout.write(out.stdout);
    if (typeof out?.stderr === 'string') process.stderr.write(out.stderr);
    // A process that never started (no such executable, say) has no output and no exit, only
    // an error saying why: show it.
    if (typeof out?.error === 'string' && out.error !== '')
      ctx.note(`job ${ref.key}: ${out.error}`);
  }
  return jobExitCode(rec.result);
};

export const submitVerb: Verb = {
  define: (program) =>
    program
      .command('submit')
      .argument('<job.json>', 'a regular or race job (Yothalot JSON)')
      .description('submit a JSON job to the workers')
      .option('--wait', "wait for the result, print it, exit with the job's own exit code")
      .option('--timeout <seconds>', 'with --wait: give up after this long')
      .option('--name <name>', 'task name (default: generated)')
      .option('-p, --priority <n>', 'higher runs first'),
  examples: ['zoott submit job.json --wait'],
  run: submitCommand,
};
