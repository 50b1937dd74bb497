import type { PauseState } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import type { CommandBody } from '../runner.js';

interface PauseOptions {
  type?: string;
}

/** One line saying what is paused in a world. */
export function describePause(p: PauseState): string {
  if (p.world)
    return `paused (all types)${p.types.length ? `; also on their own: ${p.types.join(', ')}` : ''}`;
  if (p.types.length > 0) return `paused types: ${p.types.join(', ')}`;
  return 'not paused';
}

function change(paused: boolean): CommandBody {
  return async (ctx, cmd: Command) => {
    const [world] = cmd.processedArgs as [string];
    const { validateUserWorldName } = await import('@zoott/core/internal');
    try {
      validateUserWorldName(world);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
    const { type } = cmd.opts<PauseOptions>();
    const { createEngine } = await import('@zoott/core');
    const engine = createEngine(await ctx.session().coordinator(), { world });
    const opts = type === undefined ? {} : { type };
    const state = paused ? await engine.pause(opts) : await engine.resume(opts);
    if (ctx.json) ctx.printJson({ world, paused: state });
    else ctx.out(`${world}: ${describePause(state)}`);
  };
}

/**
 * `zoott pause <world> [--type t]` and `zoott resume <world> [--type t]`: workers stop
 * claiming what is paused (their watch on the world meta tells them at once); tasks already
 * running finish. Resuming the world resumes every paused type too.
 */
export function pauseVerbs(
  program: Command,
  run: (body: CommandBody) => (...args: unknown[]) => Promise<void>,
): void {
  for (const [verb, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const)
    program
      .command(verb)
      .argument('<world>', 'world name')
      .description(
        paused
          ? 'stop workers claiming tasks of a world, or of one type (running tasks finish)'
          : 'let workers claim again what pause stopped (the whole world resumes every type)',
      )
      .option('-t, --type <type>', `${verb} only this task type`)
      .addHelpText('after', `\nExample:\n  $ zoott ${verb} files --type downloadFile\n`)
      .action(run(change(paused)));
}
