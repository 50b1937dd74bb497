import type { TaskStateName } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import { claimsByKey } from '../world-info.js';

export const STATES: readonly TaskStateName[] = ['pending', 'working', 'completed', 'failed'];

/** `zoott ls <state>`: the tasks in one state, in claim order per bucket. */
export const lsCommand: CommandBody = async (ctx, cmd: Command) => {
  const [state] = cmd.processedArgs as [string];
  if (!STATES.includes(state as TaskStateName))
    throw new CliError(
      `unknown state ${JSON.stringify(state)}`,
      2,
      `use one of: ${STATES.join(', ')}`,
    );
  const engine = await ctx.session().engine();
  const tasks = await engine.list(state as TaskStateName);
  const claims = state === 'working' ? await claimsByKey(engine) : new Map();
  const rows = tasks.map((t) => {
    const key = t.key.join('|');
    const row: { key: string; state: string; priority?: number; worker?: string } = {
      key,
      state: t.state,
    };
    if (t.priority !== undefined) row.priority = t.priority;
    const who = claims.get(key);
    if (who) row.worker = who.worker;
    return row;
  });
  if (ctx.json) {
    ctx.printJson(rows);
    return;
  }
  if (rows.length === 0) {
    ctx.note(`no ${state} tasks in world ${engine.world}`);
    return;
  }
  ctx.out(
    renderTable(
      rows.map((r) => [r.key, r.priority !== undefined ? String(r.priority) : '', r.worker ?? '']),
    ),
  );
};
