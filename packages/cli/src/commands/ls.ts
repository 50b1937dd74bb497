import type { TaskStateName } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { formatDuration, formatTime } from '../output/format.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { checkedList, claimsByKey } from '../world-info.js';

/** `now`, or when a delayed task becomes runnable and how long that is from now. */
function runnable(notBefore: number | undefined, now: number): string {
  if (notBefore === undefined || notBefore <= now) return 'now';
  return `${formatTime(notBefore)} (in ${formatDuration(notBefore - now)})`;
}

export const STATES: readonly TaskStateName[] = ['pending', 'working', 'completed', 'failed'];

/**
 * `zoott ls <state>`: the tasks in one state, in claim order per bucket. Only tasks `show`
 * finds are listed; stray or unreadable nodes of the area are reported as corrupt.
 */
const lsCommand: CommandBody = async (ctx, cmd: Command) => {
  const [state] = cmd.processedArgs as [string];
  if (!STATES.includes(state as TaskStateName))
    throw new CliError(
      `unknown state ${JSON.stringify(state)}`,
      ExitCode.USAGE,
      `use one of: ${STATES.join(', ')}`,
    );
  const engine = await ctx.session().engine();
  const [tasks, claims] = await Promise.all([
    checkedList(engine, state as TaskStateName, ctx.corrupt.add),
    state === 'working' ? claimsByKey(engine, ctx.corrupt.add) : Promise.resolve(new Map()),
  ]);
  const rows = tasks.map((task) => {
    const key = task.key.join('|');
    const row: {
      key: string;
      state: string;
      priority?: number;
      worker?: string;
      notBefore?: number;
      runnableAt?: string;
    } = { key, state: task.state };
    if (task.priority !== undefined) row.priority = task.priority;
    // A delayed task, or a retry waiting out its backoff: when it may start.
    if (task.notBefore !== undefined) {
      row.notBefore = task.notBefore;
      row.runnableAt = new Date(task.notBefore).toISOString();
    }
    const who = claims.get(key);
    if (who) row.worker = who.worker;
    return row;
  });
  if (ctx.json) {
    ctx.printJson({ world: engine.world, state, tasks: rows, corrupt: ctx.corrupt.list() });
    return;
  }
  if (rows.length === 0) {
    ctx.note(`no ${state} tasks in world ${engine.world}`);
    return;
  }
  const colours = ctx.colors;
  // Completed records keep no priority; only working tasks have a worker.
  const withPriority = state !== 'completed';
  const withWorker = state === 'working';
  const withWhen = state === 'pending';
  const now = Date.now();
  const header = [
    'TASK',
    ...(withPriority ? ['PRIORITY'] : []),
    ...(withWorker ? ['WORKER'] : []),
    ...(withWhen ? ['RUNNABLE'] : []),
  ];
  ctx.out(
    renderTable(
      rows.map((row) => [
        row.key,
        ...(withPriority ? [row.priority !== undefined ? String(row.priority) : '-'] : []),
        ...(withWorker ? [row.worker ?? '?'] : []),
        ...(withWhen ? [runnable(row.notBefore, now)] : []),
      ]),
      header.map((h) => colours.dim(h)),
    ),
  );
};

export const lsVerb: Verb = {
  define: (program) =>
    program
      .command('ls')
      .argument('<state>', 'pending | working | completed | failed')
      .description('list the tasks in one state'),
  examples: ['zoott ls failed --json'],
  run: lsCommand,
};
