import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Engine, PlacementHints, QueuedTask, QueueOptions, QueueParent } from '@zoott/core';
import type { Command } from 'commander';
import { CliError, explain } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { intOption, readJsonArg } from '../input.js';
import { templateFunctor } from '../name-template.js';
import { createProgress } from '../output/progress.js';
import type { CommandBody } from '../runner.js';
import { parseTaskRef, showKey } from '../task-ref.js';

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
}

/** One task to queue, as a --from line or built from flags. */
export interface TaskSpec {
  name: string;
  type: string;
  data?: unknown;
  /** Exact parent (`a|b` or `a/b`), or a pattern on the parents' name and type. */
  parent?: string | { name: string; type?: string };
  /** Child-name template, see name-template.ts. */
  childName?: string;
  priority?: number;
  hints?: PlacementHints;
  attempts?: number;
}

const SPEC_KEYS = new Set([
  'name',
  'type',
  'data',
  'parent',
  'childName',
  'priority',
  'hints',
  'attempts',
]);
const HINT_KEYS = new Set(['server', 'filename', 'dataset']);

function parseHints(list: string[] | undefined): PlacementHints | undefined {
  if (!list?.length) return undefined;
  const hints: Record<string, string> = {};
  for (const h of list) {
    const eq = h.indexOf('=');
    const k = eq > 0 ? h.slice(0, eq) : '';
    if (!HINT_KEYS.has(k))
      throw new CliError(
        `--hint ${JSON.stringify(h)}: expected server=..., filename=... or dataset=...`,
      );
    hints[k] = h.slice(eq + 1);
  }
  return hints;
}

/** Queues one spec; returns what the engine queued (empty when no parent matched). */
export async function queueSpec(engine: Engine, spec: TaskSpec): Promise<QueuedTask[]> {
  const info: { name: string; type: string; data?: unknown } = { name: spec.name, type: spec.type };
  if (spec.data !== undefined) info.data = spec.data;
  let parent: QueueParent;
  let pattern: string | undefined;
  if (typeof spec.parent === 'string') parent = { key: parseTaskRef(spec.parent) };
  else if (spec.parent) {
    parent =
      spec.parent.type === undefined
        ? { name: spec.parent.name }
        : { name: spec.parent.name, type: spec.parent.type };
    pattern = spec.parent.name;
  }
  const options: QueueOptions = {};
  if (spec.priority !== undefined) options.priority = spec.priority;
  if (spec.hints) options.hints = spec.hints;
  if (spec.attempts !== undefined) options.maxAttempts = spec.attempts;
  const functor = spec.childName ? templateFunctor(spec.childName, pattern) : null;
  return engine.queue(info, parent, functor, options);
}

function specFromFlags(name: string | undefined, f: QueueFlags): TaskSpec {
  if (!name)
    throw new CliError(
      'queue needs a task name (or --from tasks.jsonl)',
      2,
      'e.g. zoott queue fetch_a --type fetch',
    );
  if (!f.type) throw new CliError('queue needs --type', 2, 'e.g. zoott queue fetch_a --type fetch');
  if (f.parent && (f.parentName || f.parentType))
    throw new CliError(
      'give either --parent <task> or --parent-name/--parent-type patterns, not both',
    );
  if (f.parentType && !f.parentName)
    throw new CliError(
      '--parent-type needs --parent-name too',
      2,
      "match any name with --parent-name '.*'",
    );
  if (f.childName && !f.parent && !f.parentName)
    throw new CliError('--child-name only applies with a parent (--parent or --parent-name)');
  const spec: TaskSpec = { name, type: f.type };
  if (f.data !== undefined) spec.data = readJsonArg(f.data, '--data');
  if (f.parent) spec.parent = f.parent;
  if (f.parentName)
    spec.parent = f.parentType
      ? { name: f.parentName, type: f.parentType }
      : { name: f.parentName };
  if (f.childName) spec.childName = f.childName;
  const priority = intOption(f.priority, '--priority', -999_999, 999_999);
  if (priority !== undefined) spec.priority = priority;
  const attempts = intOption(f.attempts, '--attempts', 1, 1000);
  if (attempts !== undefined) spec.attempts = attempts;
  const hints = parseHints(f.hint);
  if (hints) spec.hints = hints;
  return spec;
}

/** Checks one --from line's shape; the engine checks names, data and patterns. */
function specFromLine(value: unknown, where: string): TaskSpec {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(`${where}: each line must be a JSON object {"name", "type", ...}`);
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!SPEC_KEYS.has(k))
      throw new CliError(
        `${where}: unknown field ${JSON.stringify(k)}`,
        2,
        `fields: ${[...SPEC_KEYS].join(', ')}`,
      );
  if (typeof o.name !== 'string' || typeof o.type !== 'string')
    throw new CliError(`${where}: "name" and "type" must be strings`);
  const p = o.parent;
  if (
    p !== undefined &&
    typeof p !== 'string' &&
    (typeof p !== 'object' || p === null || typeof (p as { name?: unknown }).name !== 'string')
  )
    throw new CliError(
      `${where}: "parent" must be a task ("a|b") or a pattern {"name": "...", "type": "..."}`,
    );
  return o as unknown as TaskSpec;
}

function describe(q: QueuedTask): string {
  return `queued ${showKey(q.key)}${q.previous ? ` (was ${q.previous})` : ''}`;
}

/** `zoott queue <name> --type T ...` or `zoott queue --from tasks.jsonl`. */
export const queueCommand: CommandBody = async (ctx, cmd: Command) => {
  const [name] = cmd.processedArgs as [string | undefined];
  const flags = cmd.opts<QueueFlags>();
  if (flags.from) {
    if (name) throw new CliError('give a task name or --from, not both');
    return queueFromFile(ctx.json, flags.from, await ctx.session().engine(), ctx);
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

async function queueFromFile(
  json: boolean,
  file: string,
  engine: Engine,
  ctx: { printJson(v: unknown): void; out(s: string): void; note(s: string): void },
): Promise<number> {
  await engine.context();
  const specs: { spec: TaskSpec; line: number }[] = [];
  const input = createInterface({
    input: file === '-' ? process.stdin : createReadStream(file),
    crlfDelay: Infinity,
  });
  let n = 0;
  for await (const raw of input) {
    n++;
    const text = raw.trim();
    if (text === '' || text.startsWith('#')) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new CliError(`${file}:${n}: not valid JSON: ${(err as Error).message}`);
    }
    specs.push({ spec: specFromLine(value, `${file}:${n}`), line: n });
  }
  const progress = createProgress({ label: `queueing ${file}`, total: specs.length });
  const keys: string[] = [];
  let unmatched = 0;
  let done = 0;
  // Top-level tasks are independent, so a run of them is queued several at a time; a task
  // with a parent waits for everything before it (its parent may be among them).
  const WINDOW = 16;
  let i = 0;
  while (i < specs.length) {
    const batch = [specs[i]!];
    if (!specs[i]!.spec.parent)
      while (
        batch.length < WINDOW &&
        i + batch.length < specs.length &&
        !specs[i + batch.length]!.spec.parent
      )
        batch.push(specs[i + batch.length]!);
    const results = await Promise.all(
      batch.map(({ spec, line }) =>
        queueSpec(engine, spec).catch((err) => {
          const e = explain(err);
          throw new CliError(
            `${file}:${line}: ${e.message}`,
            e.exitCode,
            `${done} task lines were queued before this one`,
          );
        }),
      ),
    );
    for (const r of results) {
      if (r.length === 0) unmatched++;
      for (const q of r) keys.push(showKey(q.key));
    }
    done += batch.length;
    i += batch.length;
    progress.update(done);
  }
  progress.finish();
  if (json) ctx.printJson({ lines: specs.length, queued: keys.length, unmatched, keys });
  else
    ctx.out(
      `queued ${keys.length} task(s) from ${specs.length} line(s)${unmatched ? `; ${unmatched} line(s) matched no parent` : ''}`,
    );
  return ExitCode.OK;
}
