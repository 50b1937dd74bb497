import type { Command } from 'commander';
import { runDemo } from '../demo/run.js';
import { intOption } from '../input.js';
import type { CommandBody } from '../runner.js';

interface DemoFlags {
  items?: string;
  workers?: string;
  embedded?: boolean;
  inProcess?: boolean;
  dashboard?: boolean;
  port?: string;
}

/** `zoott demo`: the sample world through workers; see demo/run.ts. */
export const demoCommand: CommandBody = async (ctx, cmd: Command) => {
  const f = cmd.opts<DemoFlags>();
  return runDemo(ctx, {
    items: intOption(f.items, '--items', 1, 500) ?? 24,
    workers: intOption(f.workers, '--workers', 1, 64) ?? 4,
    embedded: f.embedded === true,
    inProcess: f.inProcess === true,
    dashboard: f.dashboard ? { port: f.port } : null,
    // The demo has its own world unless one is named explicitly.
    world: ctx.globals.world ?? ctx.env.ZOOTT_WORLD ?? 'demo',
  });
};
