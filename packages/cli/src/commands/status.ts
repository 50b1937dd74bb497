import type { Command } from 'commander';
import { formatDuration } from '../output/format.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import { listWorkers, oldestPending } from '../world-info.js';

/** `zoott status`: counts per area, workers and their buckets, oldest pending age. */
export const statusCommand: CommandBody = async (ctx, _cmd: Command) => {
  const engine = await ctx.session().engine();
  const [counts, workers, oldest, meta] = await Promise.all([
    engine.counts(),
    listWorkers(engine),
    oldestPending(engine),
    engine.context(),
  ]);
  const now = Date.now();
  const ageMs = oldest === null ? null : Math.max(0, now - oldest);
  if (ctx.json) {
    ctx.printJson({
      world: engine.world,
      buckets: meta.layout.buckets,
      ...counts,
      total: counts.pending + counts.working + counts.completed + counts.failed,
      oldestPendingAgeMs: ageMs,
      workers: workers.map((w) => ({ ...w, bucketCount: w.buckets.length })),
    });
    return;
  }
  const c = ctx.colors;
  ctx.out(
    renderTable([
      ['world', c.bold(engine.world)],
      ['pending', String(counts.pending)],
      ['working', c.yellow(String(counts.working))],
      ['completed', c.green(String(counts.completed))],
      ['failed', counts.failed > 0 ? c.red(String(counts.failed)) : '0'],
      ['oldest pending', ageMs === null ? '-' : formatDuration(ageMs)],
      ['workers', String(workers.length)],
    ]),
  );
  if (workers.length > 0) {
    ctx.out('');
    ctx.out(
      renderTable(
        workers.map((w) => [
          w.id,
          w.host ?? '-',
          String(w.buckets.length),
          w.types.join(','),
          String(w.running.length),
        ]),
        ['WORKER', 'HOST', 'BUCKETS', 'TYPES', 'RUNNING'].map((h) => c.dim(h)),
      ),
    );
  }
};
