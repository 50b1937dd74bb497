import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import {
  type Engine,
  isZoottError,
  QueueManyError,
  type QueueManyRequest,
  type TaskKey,
} from '@zoott/core';
import type { CommandContext } from './context.js';
import { CliError, explain } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { createProgress, type Progress } from './output/progress.js';
import { showKey } from './task-ref.js';
import {
  checkSpec,
  queueSpec,
  SPEC_FIELDS,
  specFromLine,
  type TaskSpec,
  type WorldContext,
} from './task-spec.js';

/** A `--from` line that passed every check, with its line number. */
interface LineSpec {
  spec: TaskSpec;
  line: number;
  /** The key it makes; `null` for a parent pattern (the tree decides). */
  key: TaskKey | null;
}

interface BadLine {
  line: number;
  message: string;
}

/** How far queueing the checked lines got. */
interface QueueRun {
  /** Keys (`a|b`) of every task queued. */
  keys: string[];
  queuedLines: number[];
  /** Lines whose write failed; `uncertain` when the reply was lost (it may have landed). */
  failed: (BadLine & { uncertain: boolean })[];
  firstError: unknown;
  /** Lines sent in the write whose reply was lost: all of them landed, or none did. */
  uncertainLines: number[];
  /** Lines whose parent pattern matched no task. */
  unmatched: number;
}

/** Bad lines named one by one, at most this many (the count says the rest). */
const SHOWN_BAD_LINES = 50;

/**
 * Lines without a parent pattern are queued through `queueMany`, this many per call (many
 * per transaction, in file order); the progress bar moves once per call.
 */
const CHUNK = 1000;

/**
 * `queue --from`: reads and checks every line before anything is written (a file with a bad
 * line queues nothing, and every bad line is named), then queues in file order, many lines
 * per transaction, and when a write fails, stops and says exactly which lines were queued
 * and which were not.
 */
export async function queueFromFile(
  ctx: CommandContext,
  file: string,
  engine: Engine,
): Promise<number> {
  const { specs, bad } = await readLines(file, engine);
  if (bad.length > 0) refuseBadLines(ctx, file, specs.length, bad);
  const progress = createProgress({ label: `queueing ${file}`, total: specs.length });
  const run = await queueLines(engine, specs, progress);
  progress.finish();
  return reportRun(ctx, file, specs, run);
}

/** Every line of the file checked: the good ones in order, and what is wrong with the rest. */
async function readLines(
  file: string,
  engine: Engine,
): Promise<{ specs: LineSpec[]; bad: BadLine[] }> {
  const world = await engine.context();
  const specs: LineSpec[] = [];
  const bad: BadLine[] = [];
  const input = createInterface({
    input: file === '-' ? process.stdin : createReadStream(file),
    crlfDelay: Infinity,
  });
  /** Keys the file itself queues at known places (an exact parent may be one of them). */
  const made = new Set<string>();
  // After a pattern line the file may make any key, so later exact parents go unchecked.
  let patternSeen = false;
  const parentsToCheck: { parent: string; line: number }[] = [];
  let lineNo = 0;
  for await (const raw of input) {
    lineNo++;
    const text = raw.trim();
    if (text === '' || text.startsWith('#')) continue;
    try {
      const spec = parseLine(text, lineNo);
      const key = checkSpec(world, spec);
      if (typeof spec.parent === 'string') {
        const parent = key!.slice(0, -1).join('|');
        if (!made.has(parent) && !patternSeen) parentsToCheck.push({ parent, line: lineNo });
      }
      if (key) made.add(key.join('|'));
      else patternSeen = true;
      specs.push({ spec, line: lineNo, key });
    } catch (err) {
      bad.push({ line: lineNo, message: explain(err).message.replace(/^line \d+: /, '') });
    }
  }
  bad.push(...(await missingParents(engine, world, parentsToCheck)));
  return { specs, bad: bad.sort((a, b) => a.line - b.line) };
}

/** One line as JSON, of a task spec's shape. */
function parseLine(text: string, lineNo: number): TaskSpec {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(`not valid JSON: ${(err as Error).message}`);
  }
  return specFromLine(value, `line ${lineNo}`);
}

/** Exact parents the file does not create itself must exist already. */
async function missingParents(
  engine: Engine,
  world: WorldContext,
  parents: { parent: string; line: number }[],
): Promise<BadLine[]> {
  const missing = await Promise.all(
    parents.map(async ({ parent, line }) =>
      (await engine.coordinator.exists(world.layout.treePath(parent.split('|'))))
        ? null
        : { line, message: `parent ${parent} does not exist in world ${engine.world}` },
    ),
  );
  return missing.filter((m): m is BadLine => m !== null);
}

/** Names the bad lines and refuses the file: nothing was written. */
function refuseBadLines(ctx: CommandContext, file: string, good: number, bad: BadLine[]): never {
  if (ctx.json) ctx.printJson({ lines: good + bad.length, queued: 0, invalid: bad });
  else {
    for (const badLine of bad.slice(0, SHOWN_BAD_LINES))
      ctx.note(`${file}:${badLine.line}: ${badLine.message}`);
    if (bad.length > SHOWN_BAD_LINES)
      ctx.note(`... and ${bad.length - SHOWN_BAD_LINES} more bad line(s)`);
  }
  throw new CliError(
    `${bad.length} bad line(s) in ${file} (first: line ${bad[0]!.line}); nothing was queued`,
    ExitCode.USAGE,
    `fields: ${SPEC_FIELDS.join(', ')}; fix the lines named above and queue the file again`,
  );
}

/**
 * The lines queued from `from` on together: a run of lines at known keys (top level or an exact
 * parent, which an earlier line of the run may create: `queueMany` writes in order), or one
 * line with a parent pattern (it reads the tree, so it waits for everything before it).
 */
function nextBatch(specs: readonly LineSpec[], from: number): LineSpec[] {
  const batch = [specs[from]!];
  if (specs[from]!.key === null) return batch;
  while (batch.length < CHUNK && from + batch.length < specs.length) {
    const next = specs[from + batch.length]!;
    if (next.key === null) break;
    batch.push(next);
  }
  return batch;
}

/** A line at a known key as one request of `queueMany`. */
function manyRequest(spec: TaskSpec, key: TaskKey): QueueManyRequest {
  const request: QueueManyRequest = { name: key[key.length - 1]!, type: spec.type };
  if (spec.data !== undefined) request.data = spec.data;
  if (key.length > 1) request.parent = { key: key.slice(0, -1) };
  if (spec.priority !== undefined) request.priority = spec.priority;
  if (spec.hints) request.hints = spec.hints;
  if (spec.attempts !== undefined) request.maxAttempts = spec.attempts;
  if (spec.notBefore !== undefined) request.notBefore = spec.notBefore;
  return request;
}

/** Queues one batch; what was queued goes into `run`, a failure ends it. */
async function queueBatch(engine: Engine, batch: LineSpec[], run: QueueRun): Promise<void> {
  let done = 0;
  try {
    const pattern = batch[0]!.key === null;
    const queued = pattern
      ? [await queueSpec(engine, batch[0]!.spec)]
      : (await engine.queueMany(batch.map((l) => manyRequest(l.spec, l.key!)))).map((q) => [q]);
    for (const qs of queued) {
      run.queuedLines.push(batch[done++]!.line);
      if (qs.length === 0) run.unmatched++;
      for (const task of qs) run.keys.push(showKey(task.key));
    }
  } catch (err) {
    // queueMany says how far it got: the tasks before `queued` are in, the `uncertain` after
    // them went out in one multi whose reply was lost (all of them landed, or none did).
    const many = err instanceof QueueManyError ? err : null;
    const at = many?.queued ?? 0;
    // A single `queue` fails retryably (connection trouble) only when it could not look
    // whether its lost write landed.
    const unsure = many ? many.uncertain : isZoottError(err) && err.retryable ? 1 : 0;
    for (const spec of batch.slice(0, at)) {
      run.queuedLines.push(spec.line);
      run.keys.push(showKey(spec.key!));
    }
    run.firstError = err;
    run.uncertainLines = batch.slice(at, at + unsure).map((l) => l.line);
    run.failed.push({
      line: batch[at]!.line,
      message: explain(err).message,
      uncertain: unsure > 0,
    });
  }
}

/** Queues the checked lines in order, stopping at the line whose write failed. */
async function queueLines(
  engine: Engine,
  specs: readonly LineSpec[],
  progress: Progress,
): Promise<QueueRun> {
  const run: QueueRun = {
    keys: [],
    queuedLines: [],
    failed: [],
    firstError: undefined,
    uncertainLines: [],
    unmatched: 0,
  };
  let index = 0;
  while (index < specs.length && run.failed.length === 0) {
    const batch = nextBatch(specs, index);
    await queueBatch(engine, batch, run);
    index += batch.length;
    progress.update(index);
  }
  return run;
}

/** `1-3, 7, 9-12` */
function ranges(lines: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const lineNo of [...lines].sort((a, b) => a - b)) {
    const last = out[out.length - 1];
    if (last && lineNo === last[1] + 1) last[1] = lineNo;
    else out.push([lineNo, lineNo]);
  }
  return out;
}

const showRanges = (lineRanges: [number, number][]) =>
  lineRanges.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)).join(', ');

/** Says what was queued and, after a failed write, exactly which lines were not. */
function reportRun(
  ctx: CommandContext,
  file: string,
  specs: readonly LineSpec[],
  run: QueueRun,
): number {
  const { keys, queuedLines, failed, unmatched, uncertainLines } = run;
  // Lines certainly not queued: neither queued nor in the write whose reply was lost.
  const written = new Set([...queuedLines, ...uncertainLines]);
  const notQueued = ranges(specs.filter((s) => !written.has(s.line)).map((s) => s.line));
  if (ctx.json)
    ctx.printJson({
      lines: specs.length,
      queued: keys.length,
      unmatched,
      keys,
      ...(failed.length > 0
        ? { failed, notQueuedLines: notQueued, uncertainLines: ranges(uncertainLines) }
        : {}),
    });
  if (failed.length === 0) {
    if (!ctx.json)
      ctx.out(
        `queued ${keys.length} task(s) from ${specs.length} line(s)${unmatched ? `; ${unmatched} line(s) matched no parent` : ''}`,
      );
    return ExitCode.OK;
  }
  if (!ctx.json) {
    const unsure = uncertainLines.length;
    ctx.out(
      `queued ${keys.length} task(s) from ${queuedLines.length} of ${specs.length} line(s), then a write failed${unsure ? `; ${unsure} more line(s) may or may not be queued (the connection was lost while writing them)` : ''}`,
    );
    for (const failure of failed) ctx.note(`${file}:${failure.line}: ${failure.message}`);
    if (unsure)
      ctx.note(
        `line(s) ${showRanges(ranges(uncertainLines))} of ${file} were being written when the connection was lost: all of them are queued, or none is`,
      );
    if (notQueued.length > 0) ctx.note(`not queued: line(s) ${showRanges(notQueued)} of ${file}`);
  }
  return explain(run.firstError).exitCode;
}
