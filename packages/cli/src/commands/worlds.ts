import { type AreaCounts, createEngine, isZoottError } from '@zoott/core';
import { listWorlds } from '@zoott/core/admin';
import { topNodePath } from '@zoott/core/internal';
import { DEFAULT_CONNECT } from '../connection.js';
import type { CommandContext } from '../context.js';
import { explain } from '../errors.js';
import { createProgress } from '../output/progress.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { listWorkers } from '../world-info.js';

/** Why a world's numbers could not be read. */
interface WorldProblem {
  code: string;
  message: string;
}

/** One world of the listing: its numbers, or why they could not be read. */
type WorldRow =
  | ({ world: string; buckets: number; workers: number } & AreaCounts)
  | { world: string; problem: WorldProblem };

/** Worlds read at once: each read is a few round trips, and a namespace may hold many. */
const AT_ONCE = 8;

/** The world's own state, not the listing's: the codes that make one row, not a failure. */
const WORLD_STATE_CODES = ['NO_AUTH', 'WORLD_NOT_INITIALISED', 'NO_NODE'];

/**
 * Why a world could not be read, when that is the world's own state: credentials its ACL
 * refuses, a world half created or half deleted (a pending area without its tree root, a
 * bucket gone while counting), world meta that is not zoott's (also reported as a corrupt
 * node), a pending-area child that is no world name. `null` for anything else (the
 * connection, say), which fails the whole listing.
 */
function problemOf(ctx: CommandContext, world: string, err: unknown): WorldProblem | null {
  if (!isZoottError(err)) return null;
  const root = topNodePath(world);
  const corruptMeta =
    (err.code === 'BAD_ARGUMENTS' || err.code === 'INVALID_CONFIG') && err.path === root;
  const notAWorld = err.code === 'INVALID_CONFIG' && err.field === 'world';
  if (!corruptMeta && !notAWorld && !WORLD_STATE_CODES.includes(err.code)) return null;
  // The code is a field of its own; the message need not start with it too.
  const message = explain(err).message.replace(/^[A-Z_]+: /, '');
  if (corruptMeta) ctx.corrupt.add({ path: root, reason: message });
  return { code: err.code, message };
}

/** A world's buckets, counts per area and live workers (as `zoott workers` lists them). */
async function readWorld(ctx: CommandContext, world: string): Promise<WorldRow> {
  try {
    const engine = createEngine(await ctx.session().coordinator(), { world });
    const meta = await engine.context();
    const [counts, workers] = await Promise.all([
      engine.counts(),
      listWorkers(engine, ctx.corrupt.add),
    ]);
    return { world, buckets: meta.layout.buckets, ...counts, workers: workers.length };
  } catch (err) {
    const problem = problemOf(ctx, world, err);
    if (!problem) throw err;
    return { world, problem };
  }
}

/** Every world's row, in the order of `names`, AT_ONCE at a time, with progress on a TTY. */
async function readWorlds(ctx: CommandContext, names: string[]): Promise<WorldRow[]> {
  const rows: WorldRow[] = new Array(names.length);
  const progress = createProgress({
    label: 'reading worlds',
    total: names.length,
    // Piped, the listing is the output; a progress line would only be noise in the log.
    silent: process.stderr.isTTY !== true,
  });
  let next = 0;
  let done = 0;
  const reader = async () => {
    while (next < names.length) {
      const index = next++;
      rows[index] = await readWorld(ctx, names[index]!);
      progress.update(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, names.length) }, reader));
  progress.finish();
  return rows;
}

/**
 * `zoott worlds`: the user worlds of the namespace (the connect string's chroot), each with
 * its buckets, tasks per state and live workers. Needs no --world. A world that cannot be
 * read is listed with the reason, and the listing still exits 0.
 */
const worldsCommand: CommandBody = async (ctx) => {
  const connect = ctx.settings.connect ?? DEFAULT_CONNECT;
  const names = await listWorlds(await ctx.session().coordinator());
  const rows = await readWorlds(ctx, names);
  if (ctx.json) {
    ctx.printJson({ connect, worlds: rows, corrupt: ctx.corrupt.list() });
    return;
  }
  if (rows.length === 0) {
    ctx.note(`no worlds at ${connect} (\`zoott init <world>\` creates one)`);
    return;
  }
  const colours = ctx.colors;
  const withProblem = rows.some((r) => 'problem' in r);
  const header = ['WORLD', 'BUCKETS', 'PENDING', 'WORKING', 'COMPLETED', 'FAILED', 'WORKERS'];
  ctx.out(
    renderTable(
      rows.map((row) => {
        if ('problem' in row)
          return [row.world, '-', '-', '-', '-', '-', '-', colours.red(row.problem.message)];
        const cells = [
          row.world,
          String(row.buckets),
          String(row.pending),
          colours.yellow(String(row.working)),
        ];
        cells.push(
          colours.green(String(row.completed)),
          row.failed > 0 ? colours.red(String(row.failed)) : '0',
        );
        return [...cells, String(row.workers), ...(withProblem ? [''] : [])];
      }),
      [...header, ...(withProblem ? ['PROBLEM'] : [])].map((h) => colours.dim(h)),
    ),
  );
};

export const worldsVerb: Verb = {
  define: (program) =>
    program
      .command('worlds')
      .description('the worlds of the namespace: buckets, tasks per state, live workers'),
  examples: ['zoott --connect 127.0.0.1:2181/myapp worlds', 'zoott worlds --json'],
  run: worldsCommand,
};
