import type { Command } from 'commander';
import { runDemo } from '../demo/run.js';
import { intOption } from '../input.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';

interface DemoFlags {
  items?: string;
  workers?: string;
  embedded?: boolean;
  inProcess?: boolean;
  dashboard?: boolean;
  port?: string;
}

/** `zoott demo`: the sample world through workers; see demo/run.ts. */
const demoCommand: CommandBody = async (ctx, cmd: Command) => {
  const flags = cmd.opts<DemoFlags>();
  return runDemo(ctx, {
    items: intOption(flags.items, '--items', 1, 500) ?? 24,
    workers: intOption(flags.workers, '--workers', 1, 64) ?? 4,
    embedded: flags.embedded === true,
    inProcess: flags.inProcess === true,
    dashboard: flags.dashboard ? { port: flags.port } : null,
    // The demo has its own world unless one is named explicitly.
    world: ctx.globals.world ?? ctx.env.ZOOTT_WORLD ?? 'demo',
  });
};

export const demoVerb: Verb = {
  define: (program) =>
    program
      .command('demo')
      .description('queue a sample world and run it through workers, with live progress')
      .option('--items <n>', 'items in the sample world (default 24)')
      .option('--workers <n>', 'workers (default 4)')
      .option('--embedded', 'force the in-memory coordinator even when a server is configured')
      .option(
        '--in-process',
        'with --connect: run the workers in this process instead of worker processes',
      )
      .option('--dashboard', 'serve the dashboard while the demo runs, and after it until Ctrl-C')
      .option('--port <n>', 'with --dashboard: its TCP port (default 7070)'),
  examples: [
    'zoott demo                      # embedded, no ZooKeeper needed',
    'zoott demo --connect 127.0.0.1:2181/zoott-demo --workers 3',
    'zoott demo --dashboard          # then open the URL it prints (with ?token=)',
  ],
  run: demoCommand,
};
