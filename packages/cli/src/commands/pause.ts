import type { PauseState } from '@zoott/core';
import type { Command } from 'commander';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';
import { userWorldArgument } from '../world-argument.js';

interface PauseOptions {
  type?: string;
}

/** One line saying what is paused in a world. */
export function describePause(pause: PauseState): string {
  if (pause.world)
    return `paused (all types)${pause.types.length ? `; also on their own: ${pause.types.join(', ')}` : ''}`;
  if (pause.types.length > 0) return `paused types: ${pause.types.join(', ')}`;
  return 'not paused';
}

function change(paused: boolean): CommandBody {
  return async (ctx, cmd: Command) => {
    const world = await userWorldArgument(cmd);
    const { type } = cmd.opts<PauseOptions>();
    const { createEngine } = await import('@zoott/core');
    const engine = createEngine(await ctx.session().coordinator(), { world });
    const opts = type === undefined ? {} : { type };
    const state = paused ? await engine.pause(opts) : await engine.resume(opts);
    if (ctx.json) ctx.printJson({ world, paused: state });
    else ctx.out(`${world}: ${describePause(state)}`);
  };
}

/** `zoott pause <world> [--type t]`: workers stop claiming it; running tasks finish. */
export const pauseVerb: Verb = {
  define: (program) =>
    program
      .command('pause')
      .argument('<world>', 'world name')
      .description('stop workers claiming tasks of a world, or of one type (running tasks finish)')
      .option('-t, --type <type>', 'pause only this task type'),
  examples: ['zoott pause files', 'zoott pause files --type downloadFile --json'],
  run: change(true),
};

/** `zoott resume <world> [--type t]`: undoes `pause`; the whole world resumes every type. */
export const resumeVerb: Verb = {
  define: (program) =>
    program
      .command('resume')
      .argument('<world>', 'world name')
      .description('let workers claim again what pause stopped (the whole world: every type)')
      .option('-t, --type <type>', 'resume only this task type'),
  examples: ['zoott resume files', 'zoott resume files --type downloadFile'],
  run: change(false),
};
