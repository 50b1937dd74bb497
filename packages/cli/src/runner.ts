import type { Command } from 'commander';
import { CommandContext } from './context.js';
import { type ErrorContext, explain } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { describeIdentities } from './zk-security.js';

/** A command body: resolves to its exit code (anything but a number means 0). */
export type CommandBody = (ctx: CommandContext, cmd: Command) => Promise<unknown>;

/** Shared by every action: the process's interrupt signal and the exit code to end with. */
export interface RunState {
  signal: AbortSignal;
  exitCode: number;
  /** The reader of stdout or stderr went away (EPIPE): the verb ends quietly, exit 0. */
  outputClosed?: boolean;
}

/**
 * Wraps a command body for commander: builds the context, runs the body, closes the
 * session, and turns any error into a friendly message and an exit code.
 */
export function runner(state: RunState) {
  return (body: CommandBody) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      const ctx = CommandContext.of(cmd, state.signal);
      try {
        const result = await body(ctx, cmd);
        warnCorrupt(ctx);
        const code = typeof result === 'number' ? result : ExitCode.OK;
        state.exitCode = state.signal.aborted && code === ExitCode.OK ? ExitCode.INTERRUPTED : code;
      } catch (err) {
        // An error after the output closed is the verb winding down: nobody reads it.
        if (state.outputClosed) return;
        warnCorrupt(ctx);
        state.exitCode = report(err, ctx);
      } finally {
        await ctx.close();
      }
    };
}

/**
 * One warning line per corrupt node the command skipped, on stderr (in --json mode too: the
 * verbs that read tasks also put them in their document under `corrupt`).
 */
function warnCorrupt(ctx: CommandContext): void {
  const bad = ctx.corrupt.list();
  if (bad.length === 0) return;
  const colours = ctx.errColors;
  for (const corrupt of bad)
    process.stderr.write(`${colours.yellow('corrupt:')} ${corrupt.path}: ${corrupt.reason}
`);
  process.stderr.write(
    `${colours.dim('hint:')} ${bad.length === 1 ? 'this node was' : `these ${bad.length} nodes were`} skipped; repair or delete ${bad.length === 1 ? 'it' : 'them'} (\`zoott cancel <task>\` removes a task with all its nodes)
`,
  );
}

/** Prints an error the friendly way (stack only with --debug) and returns its exit code. */
export function report(err: unknown, ctx: CommandContext): number {
  let where: ErrorContext = {};
  try {
    where = {
      connect: ctx.settings.connect ?? undefined,
      world: ctx.settings.world,
      identities: describeIdentities(ctx.settings.auth, ctx.settings.zkSecurity),
    };
  } catch {
    // The settings themselves were the problem; the error says so.
  }
  const explained = explain(err, where);
  const colours = ctx.errColors;
  process.stderr.write(`${colours.red('error:')} ${explained.message}\n`);
  if (explained.hint) process.stderr.write(`${colours.dim('hint:')} ${explained.hint}\n`);
  if (ctx.globals.debug && err instanceof Error && err.stack)
    process.stderr.write(`${err.stack}\n`);
  return explained.exitCode;
}
