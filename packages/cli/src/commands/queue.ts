import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type {
  Engine,
  PlacementHints,
  QueuedTask,
  QueueManyRequest,
  QueueOptions,
  QueueParent,
} from '@zoott/core';
import {
  compileParentPattern,
  resolveQueueOptions,
  validateKey,
  validateTaskInfo,
} from '@zoott/core/internal';
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

/** A --from line that passed every check, with its line number. */
interface LineSpec {
  spec: TaskSpec;
  line: number;
}

/**
 * Everything about one line that can be known without writing: its shape, the task's name,
 * type and data, priority, attempts and hints, the parent reference or pattern, the
 * child-name template and the key it makes under an exact parent. Throws what is wrong.
 */
function checkSpec(ctx: Awaited<ReturnType<Engine['context']>>, spec: TaskSpec): void {
  validateTaskInfo({ name: spec.name, type: spec.type, data: spec.data ?? null }, ctx.limits);
  const options: QueueOptions = {};
  if (spec.priority !== undefined) options.priority = spec.priority;
  if (spec.hints !== undefined) options.hints = spec.hints;
  if (spec.attempts !== undefined) options.maxAttempts = spec.attempts;
  resolveQueueOptions(ctx, options);
  if (spec.childName !== undefined && spec.parent === undefined)
    throw new CliError('"childName" only applies with a "parent"');
  if (typeof spec.parent === 'string') {
    const parent = parseTaskRef(spec.parent);
    const child = spec.childName
      ? templateFunctor(spec.childName)(parent[parent.length - 1]!, spec.name)
      : spec.name;
    validateKey([...parent, child], ctx.limits);
  } else if (spec.parent) {
    compileParentPattern(spec.parent);
    if (spec.childName !== undefined) templateFunctor(spec.childName, spec.parent.name);
  }
}

/** Lines queued per `queueMany` call: the progress bar moves once per call. */
const FROM_CHUNK = 1000;

const isPattern = (spec: TaskSpec) => typeof spec.parent === 'object';

/** The key a line without a pattern makes (checked already by `checkSpec`). */
function keyOf(spec: TaskSpec): string[] {
  if (typeof spec.parent !== 'string') return [spec.name];
  const parent = parseTaskRef(spec.parent);
  const child = spec.childName
    ? templateFunctor(spec.childName)(parent[parent.length - 1]!, spec.name)
    : spec.name;
  return [...parent, child];
}

/** A line without a pattern as one request of `queueMany`. */
function manyRequest(spec: TaskSpec): QueueManyRequest {
  const key = keyOf(spec);
  const request: QueueManyRequest = { name: key[key.length - 1]!, type: spec.type };
  if (spec.data !== undefined) request.data = spec.data;
  if (key.length > 1) request.parent = { key: key.slice(0, -1) };
  if (spec.priority !== undefined) request.priority = spec.priority;
  if (spec.hints) request.hints = spec.hints;
  if (spec.attempts !== undefined) request.maxAttempts = spec.attempts;
  return request;
}

/** The index queueMany's error names (`tasks[3]`), 0 when it names none. */
function failedIndex(err: unknown): number {
  const field = (err as { field?: unknown }).field;
  const m = typeof field === 'string' ? /^tasks\[(\d+)\]/.exec(field) : null;
  return m ? Number(m[1]) : 0;
}

/** `1-3, 7, 9-12` */
function ranges(lines: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const n of [...lines].sort((a, b) => a - b)) {
    const last = out[out.length - 1];
    if (last && n === last[1] + 1) last[1] = n;
    else out.push([n, n]);
  }
  return out;
}

const showRanges = (r: [number, number][]) =>
  r.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)).join(', ');

/**
 * Reads and checks every line before anything is written: a file with a bad line queues
 * nothing, and every bad line is named. Then queues in file order, many lines per
 * transaction, and when a write fails, stops and says exactly which lines were queued and
 * which were not.
 */
async function queueFromFile(
  json: boolean,
  file: string,
  engine: Engine,
  ctx: { printJson(v: unknown): void; out(s: string): void; note(s: string): void },
): Promise<number> {
  const ectx = await engine.context();
  const specs: LineSpec[] = [];
  const bad: { line: number; message: string }[] = [];
  const input = createInterface({
    input: file === '-' ? process.stdin : createReadStream(file),
    crlfDelay: Infinity,
  });
  /** Keys the file itself queues at known places (an exact parent may be one of them). */
  const made = new Set<string>();
  let patternSeen = false;
  const parentsToCheck: { parent: string; line: number }[] = [];
  let n = 0;
  for await (const raw of input) {
    n++;
    const text = raw.trim();
    if (text === '' || text.startsWith('#')) continue;
    try {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw new CliError(`not valid JSON: ${(err as Error).message}`);
      }
      const spec = specFromLine(value, `line ${n}`);
      checkSpec(ectx, spec);
      if (typeof spec.parent === 'string') {
        const parent = parseTaskRef(spec.parent).join('|');
        if (!made.has(parent) && !patternSeen) parentsToCheck.push({ parent, line: n });
        const child = spec.childName
          ? templateFunctor(spec.childName)(parent.split('|').pop()!, spec.name)
          : spec.name;
        made.add(`${parent}|${child}`);
      } else if (spec.parent) patternSeen = true;
      else made.add(spec.name);
      specs.push({ spec, line: n });
    } catch (err) {
      bad.push({ line: n, message: explain(err).message.replace(/^line \d+: /, '') });
    }
  }
  // Exact parents the file does not create itself must exist already.
  const missing = await Promise.all(
    parentsToCheck.map(async ({ parent, line }) =>
      (await engine.coordinator.exists(ectx.layout.treePath(parent.split('|'))))
        ? null
        : { line, message: `parent ${parent} does not exist in world ${engine.world}` },
    ),
  );
  for (const m of missing) if (m) bad.push(m);
  if (bad.length > 0) {
    bad.sort((a, b) => a.line - b.line);
    if (json) ctx.printJson({ lines: specs.length + bad.length, queued: 0, invalid: bad });
    else for (const b of bad.slice(0, 50)) ctx.note(`${file}:${b.line}: ${b.message}`);
    if (!json && bad.length > 50) ctx.note(`... and ${bad.length - 50} more bad line(s)`);
    throw new CliError(
      `${bad.length} bad line(s) in ${file} (first: line ${bad[0]!.line}); nothing was queued`,
      ExitCode.USAGE,
      `fields: ${[...SPEC_KEYS].join(', ')}; fix the lines named above and queue the file again`,
    );
  }
  const progress = createProgress({ label: `queueing ${file}`, total: specs.length });
  const keys: string[] = [];
  const queuedLines: number[] = [];
  const failed: { line: number; message: string; uncertain: boolean }[] = [];
  let firstError: unknown;
  let unmatched = 0;
  let done = 0;
  // Lines without a parent pattern go out through queueMany: many tasks per transaction, in
  // file order (an exact parent queued earlier in the file exists by then). A pattern reads
  // the tree, so such a line is queued alone, after everything before it.
  let i = 0;
  while (i < specs.length && failed.length === 0) {
    const batch = [specs[i]!];
    const pattern = isPattern(specs[i]!.spec);
    if (!pattern)
      while (
        batch.length < FROM_CHUNK &&
        i + batch.length < specs.length &&
        !isPattern(specs[i + batch.length]!.spec)
      )
        batch.push(specs[i + batch.length]!);
    try {
      const queued = pattern
        ? [await queueSpec(engine, batch[0]!.spec)]
        : (await engine.queueMany(batch.map(({ spec }) => manyRequest(spec)))).map((q) => [q]);
      queued.forEach((qs, j) => {
        queuedLines.push(batch[j]!.line);
        if (qs.length === 0) unmatched++;
        for (const q of qs) keys.push(showKey(q.key));
      });
    } catch (err) {
      // queueMany names the task that failed (`tasks[j]`): the ones before it are queued.
      const at = pattern ? 0 : failedIndex(err);
      for (const { line } of batch.slice(0, at)) queuedLines.push(line);
      for (const { spec } of batch.slice(0, at)) keys.push(showKey(keyOf(spec)));
      firstError = err;
      const code = (err as { code?: string }).code ?? '';
      failed.push({
        line: batch[at]!.line,
        message: explain(err).message,
        uncertain: code === 'CONNECTION_LOSS' || code === 'OPERATION_TIMEOUT',
      });
    }
    done += batch.length;
    i += batch.length;
    progress.update(done);
  }
  progress.finish();
  const queuedSet = new Set(queuedLines);
  const notQueued = ranges(specs.filter((s) => !queuedSet.has(s.line)).map((s) => s.line));
  if (json)
    ctx.printJson({
      lines: specs.length,
      queued: keys.length,
      unmatched,
      keys,
      ...(failed.length > 0 ? { failed, notQueuedLines: notQueued } : {}),
    });
  if (failed.length === 0) {
    if (!json)
      ctx.out(
        `queued ${keys.length} task(s) from ${specs.length} line(s)${unmatched ? `; ${unmatched} line(s) matched no parent` : ''}`,
      );
    return ExitCode.OK;
  }
  if (!json) {
    const unsure = failed.filter((f) => f.uncertain).length;
    ctx.out(
      `queued ${keys.length} task(s) from ${queuedLines.length} of ${specs.length} line(s), then a write failed${unsure ? `; ${unsure} more line(s) may or may not be queued (the connection was lost while writing them)` : ''}`,
    );
    for (const f of failed)
      ctx.note(
        `${file}:${f.line}: ${f.message}${f.uncertain ? ' (the connection was lost while writing it: it may or may not be queued)' : ''}`,
      );
    ctx.note(`not queued: line(s) ${showRanges(notQueued)} of ${file}`);
  }
  return explain(firstError).exitCode;
}
