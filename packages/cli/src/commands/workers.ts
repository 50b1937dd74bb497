import type { Command } from 'commander';
import { formatDuration } from '../output/format.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { listWorkers } from '../world-info.js';

/**
 * `zoott workers`: the registry. A worker is listed only while its session is alive (its
 * registry node is ephemeral), so every row is a live worker; UP is the time since it
 * started; RUNNING shows its claims.
 */
const workersCommand: CommandBody = async (ctx, _cmd: Command) => {
  const engine = await ctx.session().engine();
  const workers = await listWorkers(engine, ctx.corrupt.add);
  const now = Date.now();
  if (ctx.json) {
    ctx.printJson({
      world: engine.world,
      workers: workers.map((w) => ({ ...w, alive: true, uptimeMs: Math.max(0, now - w.started) })),
      corrupt: ctx.corrupt.list(),
    });
    return;
  }
  if (workers.length === 0) {
    ctx.note(`no live workers in world ${engine.world} (start some with \`zoott-worker\`)`);
    return;
  }
  const colours = ctx.colors;
  ctx.out(
    renderTable(
      workers.map((worker) => [
        worker.id,
        worker.host ? `${worker.host}${worker.pid ? `:${worker.pid}` : ''}` : '-',
        colours.green('alive'),
        formatDuration(now - worker.started),
        String(worker.buckets.length),
        worker.types.join(','),
        worker.running.length ? worker.running.join(' ') : colours.dim('idle'),
      ]),
      ['WORKER', 'HOST', 'HEALTH', 'UP', 'BUCKETS', 'TYPES', 'RUNNING'].map((h) => colours.dim(h)),
    ),
  );
};

export const workersVerb: Verb = {
  define: (program) =>
    program.command('workers').description('live workers: health, buckets, what each runs'),
  examples: ['zoott workers'],
  run: workersCommand,
};
