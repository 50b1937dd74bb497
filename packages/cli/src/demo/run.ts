import {
  type Coordinator,
  createEngine,
  type Engine,
  type Handlers,
  runWorker,
  type TreeNode,
  type WorkerHandle,
} from '@zoott/core';
import { topNodePath } from '@zoott/core/internal';
import { MemoryServer } from '@zoott/memory-adapter';
import { type DashboardFlags, serveDashboard, untilInterrupted } from '../commands/dashboard.js';
import { cliLogger, ensureChroot, openZk } from '../connection.js';
import type { CommandContext } from '../context.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { formatDuration } from '../output/format.js';
import { createProgress } from '../output/progress.js';
import { countTree, renderTree, treeToJson } from '../output/tree.js';
import { zoottCommand } from './invocation.js';
import { demoJobHandlers } from './job-handlers.js';
import { sampleHandlers } from './sample-handlers.js';
import { itemNames, queueSampleWorld } from './sample-world.js';
import { wipeWorld } from './wipe.js';
import {
  startWorkerProcesses,
  type WorkerFailure,
  type WorkerProcesses,
} from './worker-processes.js';

export interface DemoOptions {
  items: number;
  workers: number;
  embedded: boolean;
  inProcess: boolean;
  world: string;
  /** Serve the dashboard during the run and after it, until interrupted. */
  dashboard: DashboardFlags | null;
}

/** Demo runs retry fast, so a failed first attempt shows up within the run. */
const DEMO_BACKOFF = { baseMs: 150, maxMs: 600 };

/** Sum over tasks of attempts beyond the first, read from the final records. */
async function countRetries(
  engine: Engine,
  nodes: readonly TreeNode[],
): Promise<Map<string, number>> {
  const keys: TreeNode[] = [];
  const walk = (list: readonly TreeNode[]) => {
    for (const node of list) {
      keys.push(node);
      walk(node.children);
    }
  };
  walk(nodes);
  const attempts = new Map<string, number>();
  await Promise.all(
    keys.map(async (node) => {
      const rec = await engine.task(node.key);
      if (rec) attempts.set(node.key.join('|'), rec.attempts);
    }),
  );
  return attempts;
}

/** Refuses to wipe a world that holds anything but an earlier demo run. */
async function clearDemoWorld(coordinator: Coordinator, world: string): Promise<void> {
  let roots: string[] = [];
  try {
    roots = await coordinator.children(topNodePath(world));
  } catch {
    return; // no such world yet
  }
  const foreign = roots.filter((r) => !/^requestFile_f\d+$/.test(r));
  if (foreign.length > 0)
    throw new CliError(
      `world ${world} holds tasks that are not the demo's (${foreign.slice(0, 3).join(', ')}...)`,
      ExitCode.CONFLICT,
      'run the demo in another world, e.g. --world demo',
    );
  await wipeWorld(coordinator, world);
}

/** What a demo run started; `close` stops it all, whatever the run ended with. */
class DemoResources {
  readonly sessions: Coordinator[] = [];
  readonly workers: WorkerHandle[] = [];
  procs: WorkerProcesses | null = null;
  closeDashboard: (() => Promise<void>) | null = null;

  async close(): Promise<void> {
    await this.closeDashboard?.();
    await Promise.all(this.workers.map((w) => w.stop()));
    await this.procs?.stop();
    await Promise.all(this.sessions.map((c) => c.close().catch(() => undefined)));
  }
}

/** How the demo reaches its coordinator, and where its workers run. */
interface DemoSetup {
  embedded: boolean;
  /** A new session: on the embedded server, or on the configured ZooKeeper. */
  connect(): Promise<Coordinator>;
  logger: ReturnType<typeof cliLogger>;
}

/** The final tree, each task's attempts, and the numbers of the summary line. */
interface DemoOutcome {
  tree: TreeNode[];
  attempts: Map<string, number>;
  summary: {
    tasks: number;
    completed: number;
    failed: number;
    retried: number;
    wallMs: number;
    tasksPerSecond: number;
  };
}

/**
 * Starts the workers and says what runs where. Against ZooKeeper they are `zoott-worker`
 * processes (loading the demo's handlers module); embedded, or with --in-process, they run
 * in this process, each with its own session.
 */
async function startDemoWorkers(
  ctx: CommandContext,
  options: DemoOptions,
  setup: DemoSetup,
  res: DemoResources,
): Promise<string> {
  const { embedded, logger } = setup;
  const settings = ctx.settings;
  if (!embedded && !options.inProcess)
    res.procs = await startWorkerProcesses(settings, options.world, options.workers);
  const inProcess = res.procs ? 0 : options.workers;
  for (let i = 0; i < inProcess; i++) {
    const coordinator = await setup.connect();
    res.sessions.push(coordinator);
    const handlers: Handlers = {
      ...sampleHandlers(),
      ...(await demoJobHandlers(coordinator, options.world)),
    };
    res.workers.push(
      runWorker(coordinator, handlers, {
        world: options.world,
        id: `demo-w${i + 1}`,
        concurrency: 2,
        stealAfterMs: 100,
        pollMs: 500,
        logger,
        engineOptions: { logger },
      }),
    );
  }
  return res.procs
    ? `${res.procs.count} zoott-worker processes`
    : `${inProcess} in-process workers`;
}

/**
 * The demo's error for a worker process that ended under it, in the worker's own words, with
 * its exit code where it has one of the codes the CLI shares with it (unreachable, auth, ...).
 */
function workerFailed(failure: WorkerFailure): CliError {
  const how =
    failure.signal !== null
      ? `was killed by ${failure.signal}`
      : `exited with code ${failure.code ?? 'unknown'}`;
  const said = failure.stderr === '' ? ' (it wrote nothing on stderr)' : `:\n${failure.stderr}`;
  const code =
    failure.code !== null && failure.code >= 1 && failure.code <= 5
      ? failure.code
      : ExitCode.FAILURE;
  return new CliError(
    `zoott-worker ${failure.node} ${how} before the demo ended${said}`,
    code,
    "the demo's workers use this command's connection (--connect, --auth, --session-timeout), not your worker settings; --in-process runs them in this process",
  );
}

/**
 * Queues the sample world and shows progress until every task is settled; resolves with
 * the wall time, or `null` when interrupted. A worker process that ends meanwhile (`procs`)
 * ends it at once with that worker's error: nothing would run the rest.
 */
async function runToEnd(
  ctx: CommandContext,
  engine: Engine,
  items: string[],
  total: number,
  procs: WorkerProcesses | null,
): Promise<number | null> {
  const started = Date.now();
  const progress = createProgress({ label: 'running', total, plainEveryMs: 1000 });
  let failure: WorkerFailure | null = null;
  const failed = procs?.failed.then((workerFailure) => {
    failure = workerFailure;
  });
  let queued = false;
  const queueing = queueSampleWorld(engine, items).then((count) => {
    queued = true;
    return count;
  });
  queueing.catch(() => undefined);
  const pause = () =>
    Promise.race([new Promise((r) => setTimeout(r, 150)), ...(failed ? [failed] : [])]);
  for (;;) {
    if (ctx.signal.aborted) {
      progress.finish('interrupted');
      return null;
    }
    if (failure !== null) {
      progress.finish('a worker process ended');
      throw workerFailed(failure);
    }
    const counts = await engine.counts();
    progress.update(
      counts.completed + counts.failed,
      total,
      `${counts.working} working, ${counts.pending} pending${counts.failed ? `, ${counts.failed} failed` : ''}`,
    );
    if (queued && counts.pending === 0 && counts.working === 0) break;
    if (!queued) await Promise.race([queueing, pause()]);
    else await pause();
  }
  await queueing;
  const wallMs = Date.now() - started;
  progress.finish();
  return wallMs;
}

/** Reads the final tree and each task's attempts, and sums them up. */
async function outcomeOf(engine: Engine, total: number, wallMs: number): Promise<DemoOutcome> {
  const tree = await engine.tree();
  const attempts = await countRetries(engine, tree);
  const counts = countTree(tree);
  const retried = [...attempts.values()].reduce((n, a) => n + Math.max(0, a - 1), 0);
  return {
    tree,
    attempts,
    summary: {
      tasks: total,
      completed: counts.completed ?? 0,
      failed: counts.failed ?? 0,
      retried,
      wallMs,
      tasksPerSecond: Math.round((total / Math.max(1, wallMs)) * 1000 * 10) / 10,
    },
  };
}

/** The final tree and the summary line (or the --json document), and what to try next. */
function printOutcome(
  ctx: CommandContext,
  options: DemoOptions,
  embedded: boolean,
  { tree, attempts, summary }: DemoOutcome,
): void {
  if (ctx.json) {
    ctx.printJson({
      world: options.world,
      embedded,
      workers: options.workers,
      tasks: treeToJson(tree),
      summary,
    });
    return;
  }
  const colours = ctx.colors;
  ctx.out(
    renderTree(options.world, tree, colours, (node) => {
      const attempt = attempts.get(node.key.join('|')) ?? 1;
      return attempt > 1 ? colours.magenta(` (${attempt} attempts)`) : '';
    }),
  );
  ctx.out('');
  ctx.out(
    `${colours.bold('summary')}  ${colours.green(`${summary.completed} completed`)}, ` +
      `${summary.failed ? colours.red(`${summary.failed} failed`) : '0 failed'}, ` +
      `${summary.retried} retried, wall time ${formatDuration(summary.wallMs)}, ${summary.tasksPerSecond} tasks/s`,
  );
  if (embedded) {
    const zoott = zoottCommand(process.env);
    ctx.note(
      colours.dim(
        `next: \`${zoott} --help\`; against a real ZooKeeper: \`${zoott} demo --connect 127.0.0.1:2181\``,
      ),
    );
  } else
    ctx.note(
      colours.dim(
        `the world is still there: \`zoott --connect ${ctx.settings.connect} --world ${options.world} tree\``,
      ),
    );
}

/**
 * The demo: a sample world queued and run through several workers, a live progress bar,
 * then the final tree and a summary. Embedded (in-memory coordinator, in-process workers)
 * unless a server is configured; against ZooKeeper the JSON jobs run in worker processes.
 */
export async function runDemo(ctx: CommandContext, options: DemoOptions): Promise<number> {
  const settings = ctx.settings;
  const embedded = options.embedded || settings.connect === null;
  const server = embedded ? new MemoryServer() : null;
  const setup: DemoSetup = {
    embedded,
    connect: () => (server ? server.connect() : openZk(settings)),
    logger: cliLogger(ctx.globals.debug === true),
  };
  const res = new DemoResources();
  const items = itemNames(options.items);
  const total = items.length * 3;
  try {
    if (!embedded) await ensureChroot(settings);
    const producer = await setup.connect();
    res.sessions.push(producer);
    if (!embedded) await clearDemoWorld(producer, options.world);
    const engine = createEngine(producer, {
      world: options.world,
      logger: setup.logger,
      defaults: { backoff: DEMO_BACKOFF },
    });
    await engine.init();
    if (options.dashboard)
      res.closeDashboard = await serveDashboard(ctx, producer, options.dashboard, options.world);
    const who = await startDemoWorkers(ctx, options, setup, res);
    const where = embedded
      ? 'the embedded in-memory coordinator (no ZooKeeper)'
      : `ZooKeeper at ${settings.connect}`;
    ctx.note(`zoott demo: ${total} tasks in world "${options.world}" on ${where}, ${who}`);
    const wallMs = await runToEnd(ctx, engine, items, total, res.procs);
    if (wallMs === null) return ExitCode.INTERRUPTED;
    const outcome = await outcomeOf(engine, total, wallMs);
    printOutcome(ctx, options, embedded, outcome);
    if (res.closeDashboard) await untilInterrupted(ctx);
    return outcome.summary.failed > 0 ? ExitCode.TASKS_FAILED : ExitCode.OK;
  } finally {
    await res.close();
  }
}
