import {
  addSchedule,
  currentScheduler,
  type ListedSchedule,
  listSchedules,
  removeSchedule,
  type ScheduleSpec,
} from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { readJsonArg } from '../input.js';
import { formatTime } from '../output/format.js';
import { renderTable } from '../output/table.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';

interface AddOptions {
  cron?: string;
  type?: string;
  data?: string;
  tz?: string;
}

/** `zoott schedule add <name> --cron <expr> --type <t> [--data] [--tz]`. */
export const scheduleAddCommand: CommandBody = async (ctx, cmd: Command) => {
  const [name] = cmd.processedArgs as [string];
  const options = cmd.opts<AddOptions>();
  if (options.cron === undefined) throw new CliError('--cron is required', ExitCode.USAGE);
  if (options.type === undefined) throw new CliError('--type is required', ExitCode.USAGE);
  const spec: ScheduleSpec = { name, cron: options.cron, type: options.type };
  if (options.tz !== undefined) spec.tz = options.tz;
  if (options.data !== undefined) spec.data = readJsonArg(options.data, '--data');
  const engine = await ctx.session().engine();
  await addSchedule(engine, spec);
  const added = (await listSchedules(engine)).find((s) => s.name === name);
  if (ctx.json) return ctx.printJson({ world: engine.world, schedule: added ?? spec });
  ctx.out(
    `schedule ${name} added to world ${engine.world}: ${describe(added ?? { ...spec, nextTick: null })}`,
  );
};

/** `zoott schedule list`: every schedule with its next tick, and the elected scheduler. */
export const scheduleListCommand: CommandBody = async (ctx) => {
  const engine = await ctx.session().engine();
  const [schedules, scheduler] = await Promise.all([
    listSchedules(engine),
    currentScheduler(engine),
  ]);
  if (ctx.json) return ctx.printJson({ world: engine.world, scheduler, schedules });
  if (schedules.length === 0) {
    ctx.note(`no schedules in world ${engine.world} (add one with \`zoott schedule add\`)`);
    return;
  }
  const colours = ctx.colors;
  ctx.out(
    renderTable(
      schedules.map((schedule) => [
        schedule.name,
        schedule.cron,
        schedule.tz ?? 'UTC',
        schedule.type,
        schedule.nextTick === null ? '-' : formatTime(schedule.nextTick),
        formatTime(schedule.lastTick),
      ]),
      ['NAME', 'CRON', 'TZ', 'TYPE', 'NEXT TICK', 'LAST TICK'].map((h) => colours.dim(h)),
    ),
  );
  ctx.note(
    scheduler === null
      ? 'no scheduler: no worker runs in this world, so no tick is queued'
      : `scheduler: ${scheduler}`,
  );
};

/** `zoott schedule remove <name>`: exit 5 when there is no such schedule. */
export const scheduleRemoveCommand: CommandBody = async (ctx, cmd: Command) => {
  const [name] = cmd.processedArgs as [string];
  const engine = await ctx.session().engine();
  if (!(await removeSchedule(engine, name)))
    throw new CliError(
      `no schedule ${name} in world ${engine.world}`,
      ExitCode.NOT_FOUND,
      'see `zoott schedule list`',
    );
  if (ctx.json) return ctx.printJson({ world: engine.world, removed: name });
  ctx.out(`schedule ${name} removed from world ${engine.world} (ticks already queued stay)`);
};

function describe(schedule: Pick<ListedSchedule, 'cron' | 'tz' | 'type' | 'nextTick'>): string {
  const next =
    schedule.nextTick === null ? 'never fires again' : `next tick ${formatTime(schedule.nextTick)}`;
  return `${schedule.cron} (${schedule.tz ?? 'UTC'}), type ${schedule.type}; ${next}`;
}

/** The `schedule` group, made by whichever of its verbs is declared first. */
function scheduleGroup(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === 'schedule') ??
    program
      .command('schedule')
      .description('cron schedules: the workers elect one scheduler that queues a task per tick')
  );
}

/** `zoott schedule add|list|remove`, one verb each under the `schedule` group. */
export const scheduleVerbs: readonly Verb[] = [
  {
    define: (program) =>
      scheduleGroup(program)
        .command('add')
        .argument('<name>', 'schedule name; tick tasks are named <name>-<UTC tick time>')
        .description('add a schedule (stored in the world; refused if the name exists)')
        .option('--cron <expr>', "cron expression, 5 fields or 6 with seconds: '0 2 * * *'")
        .option('-t, --type <type>', 'task type of the tick tasks')
        .option('-d, --data <json|@file>', 'JSON payload of every tick task, inline or @file')
        .option('--tz <zone>', 'IANA time zone the expression is read in (default UTC)'),
    examples: [
      `zoott schedule add nightly --cron '0 2 * * *' --type report --data '{"full":true}' --tz Europe/Amsterdam`,
    ],
    run: scheduleAddCommand,
  },
  {
    define: (program) =>
      scheduleGroup(program)
        .command('list')
        .description('the schedules with their next and last tick, and the elected scheduler'),
    examples: ['zoott schedule list --json'],
    run: scheduleListCommand,
  },
  {
    define: (program) =>
      scheduleGroup(program)
        .command('remove')
        .argument('<name>', 'schedule name')
        .description('remove a schedule (tasks already queued stay)'),
    examples: ['zoott schedule remove nightly'],
    run: scheduleRemoveCommand,
  },
];
