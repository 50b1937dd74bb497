import type { PlacementHints, QueuedTask } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { intOption, readJsonArg } from '../input.js';
import { queueFromFile } from '../queue-file.js';
import type { CommandBody } from '../runner.js';
import { showKey } from '../task-ref.js';
import { queueSpec, type TaskSpec } from '../task-spec.js';
import { repeatable, type Verb } from '../verb.js';
import { notBeforeOf } from '../when.js';

interface QueueFlags {
  type?: string;
  data?: string;
  parent?: string;
  parentName?: string;
  parentType?: string;
  childName?: string;
  priority?: string;
  hint?: string[];
  attempts?: string;
  from?: string;
  delay?: string;
  at?: string;
}

const HINT_KEYS = new Set(['server', 'filename', 'dataset']);

function parseHints(list: string[] | undefined): PlacementHints | undefined {
  if (!list?.length) return undefined;
  const hints: Record<string, string> = {};
  for (const hint of list) {
    const eq = hint.indexOf('=');
    const key = eq > 0 ? hint.slice(0, eq) : '';
    if (!HINT_KEYS.has(key))
      throw new CliError(
        `--hint ${JSON.stringify(hint)}: expected server=..., filename=... or dataset=...`,
      );
    hints[key] = hint.slice(eq + 1);
  }
  return hints;
}

function specFromFlags(name: string | undefined, flags: QueueFlags): TaskSpec {
  if (!name)
    throw new CliError(
      'queue needs a task name (or --from tasks.jsonl)',
      ExitCode.USAGE,
      'e.g. zoott queue fetch_a --type fetch',
    );
  if (!flags.type)
    throw new CliError(
      'queue needs --type',
      ExitCode.USAGE,
      'e.g. zoott queue fetch_a --type fetch',
    );
  if (flags.parent && (flags.parentName || flags.parentType))
    throw new CliError(
      'give either --parent <task> or --parent-name/--parent-type patterns, not both',
    );
  if (flags.parentType && !flags.parentName)
    throw new CliError(
      '--parent-type needs --parent-name too',
      ExitCode.USAGE,
      "match any name with --parent-name '.*'",
    );
  if (flags.childName && !flags.parent && !flags.parentName)
    throw new CliError('--child-name only applies with a parent (--parent or --parent-name)');
  const spec: TaskSpec = { name, type: flags.type };
  if (flags.data !== undefined) spec.data = readJsonArg(flags.data, '--data');
  if (flags.parent) spec.parent = flags.parent;
  if (flags.parentName)
    spec.parent = flags.parentType
      ? { name: flags.parentName, type: flags.parentType }
      : { name: flags.parentName };
  if (flags.childName) spec.childName = flags.childName;
  const priority = intOption(flags.priority, '--priority', -999_999, 999_999);
  if (priority !== undefined) spec.priority = priority;
  const attempts = intOption(flags.attempts, '--attempts', 1, 1000);
  if (attempts !== undefined) spec.attempts = attempts;
  const hints = parseHints(flags.hint);
  if (hints) spec.hints = hints;
  const notBefore = notBeforeOf(flags.delay, flags.at, Date.now());
  if (notBefore !== undefined) spec.notBefore = notBefore;
  return spec;
}

function describe(queued: QueuedTask): string {
  return `queued ${showKey(queued.key)}${queued.previous ? ` (was ${queued.previous})` : ''}`;
}

/** `zoott queue <name> --type T ...` or `zoott queue --from tasks.jsonl`. */
const queueCommand: CommandBody = async (ctx, cmd: Command) => {
  const [name] = cmd.processedArgs as [string | undefined];
  const flags = cmd.opts<QueueFlags>();
  if (flags.from) {
    if (name) throw new CliError('give a task name or --from, not both');
    return queueFromFile(ctx, flags.from, await ctx.session().engine());
  }
  const spec = specFromFlags(name, flags);
  const engine = await ctx.session().engine();
  const queued = await queueSpec(engine, spec);
  if (ctx.json)
    ctx.printJson({
      queued: queued.map((q) => ({ ...q, key: showKey(q.key) })),
      corrupt: ctx.corrupt.list(),
    });
  else if (queued.length) ctx.out(queued.map(describe).join('\n'));
  if (queued.length === 0) {
    if (!ctx.json)
      ctx.note(`no task matches the parent pattern ${JSON.stringify(spec.parent)}: nothing queued`);
    return ExitCode.NOT_FOUND;
  }
  return ExitCode.OK;
};

export const queueVerb: Verb = {
  define: (program) =>
    program
      .command('queue')
      .argument('[name]', 'task name')
      .description('queue a task, or many from a JSON-lines file')
      .option('-t, --type <type>', 'task type (workers pick handlers by it)')
      .option('-d, --data <json|@file>', 'JSON payload, inline or @file')
      .option('--parent <task>', 'queue under this exact task (a|b or a/b)')
      .option('--parent-name <regex>', 'queue under every task whose whole name matches')
      .option('--parent-type <regex>', 'and whose type matches')
      .option(
        '--child-name <template>',
        'child name per parent: {name} {parent} {1}..{9} (groups of --parent-name)',
      )
      .option('-p, --priority <n>', 'higher runs first (default 0)')
      .option(
        '--hint <key=value>',
        'placement hint server=, filename= or dataset= (repeatable)',
        repeatable,
      )
      .option('--attempts <n>', 'attempts before the task is dead-lettered (default 3)')
      .option('--delay <duration>', 'start no sooner than this from now: 30s, 5m, 1h30m, 2d')
      .option('--at <time>', 'start no sooner than this ISO time (2026-11-26T12:00:00Z)')
      .option(
        '--from <tasks.jsonl>',
        'queue every line {"name","type","data","parent","childName","priority","hints","attempts","delay","at"}',
      ),
  examples: [
    `zoott queue requestFile_a --type requestFile --data '{"url":"http://x/a"}'`,
    `zoott queue downloadFile --type downloadFile --parent-name 'requestFile_(.*)' --child-name 'downloadFile_{1}'`,
    'zoott queue --from tasks.jsonl',
    'zoott queue report_nightly --type report --at 2026-11-27T02:00:00Z',
  ],
  run: queueCommand,
};
