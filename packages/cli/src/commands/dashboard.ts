import type { Coordinator } from '@zoott/core';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { intOption } from '../input.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';

export interface DashboardFlags {
  port?: string;
  host?: string;
  readOnly?: boolean;
  /** A token, or `false` for `--no-token`. */
  token?: string | false;
}

/**
 * Serves the dashboard over `coordinator` and resolves with a function that closes it.
 * Shared by `zoott dashboard` and `zoott demo --dashboard`.
 */
export async function serveDashboard(
  ctx: CommandContext,
  coordinator: Coordinator,
  flags: DashboardFlags,
  world: string | undefined,
): Promise<() => Promise<void>> {
  // Loaded on demand: the dashboard's assets are only read when someone asks for it.
  const { startDashboard, DASHBOARD_TOKEN_ENV } = await import('@zoott/dashboard');
  const noToken = flags.token === false;
  const token = noToken ? undefined : flags.token || ctx.env[DASHBOARD_TOKEN_ENV];
  const host = flags.host ?? '127.0.0.1';
  // startDashboard refuses --no-token beyond loopback (INVALID_CONFIG, exit 2).
  const dash = await startDashboard({
    coordinator,
    world,
    port: intOption(flags.port, '--port', 0, 65_535) ?? 7070,
    host,
    readOnly: flags.readOnly === true,
    ...(token ? { token } : {}),
    noToken,
  });
  // Like a notebook server: the URL to open carries the token (a random one unless given).
  ctx.note(`zoott dashboard: ${dash.openUrl}  (Ctrl-C stops it)`);
  return () => dash.close();
}

/** Resolves when the command is interrupted (Ctrl-C, SIGTERM). */
export function untilInterrupted(ctx: CommandContext): Promise<void> {
  if (ctx.signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

/** `zoott dashboard`: the web dashboard over the configured ZooKeeper, until interrupted. */
const dashboardCommand: CommandBody = async (ctx, cmd: Command) => {
  const flags = cmd.opts<DashboardFlags>();
  const coordinator = await ctx.session().coordinator();
  // Without --world the dashboard shows the first world it finds and offers the others.
  const world = ctx.globals.world ?? ctx.env.ZOOTT_WORLD;
  const close = await serveDashboard(ctx, coordinator, flags, world);
  await untilInterrupted(ctx);
  await close();
};

export const dashboardVerb: Verb = {
  define: (program) =>
    program
      .command('dashboard')
      .description('serve the web dashboard: counts, tree, tasks, workers, dead letters (live)')
      .option('--port <n>', 'TCP port of the dashboard (default 7070; 0 = any free port)')
      .option('--host <addr>', 'interface to bind; beyond loopback needs a token', '127.0.0.1')
      .option('--read-only', 'hide and refuse retry and cancel')
      .option('--token <token>', 'access token (env ZOOTT_DASHBOARD_TOKEN; default: a random one)')
      .option('--no-token', 'serve without a token (loopback only)'),
  examples: [
    'zoott --connect 127.0.0.1:2181 dashboard --world files --read-only',
    'zoott dashboard --host 0.0.0.0 --token "$(openssl rand -hex 16)"',
  ],
  run: dashboardCommand,
};
