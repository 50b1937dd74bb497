import type {
  Engine,
  PlacementHints,
  QueuedTask,
  QueueOptions,
  QueueParent,
  TaskKey,
} from '@zoott/core';
import {
  compileParentPattern,
  resolveQueueOptions,
  validateKey,
  validateTaskInfo,
} from '@zoott/core/internal';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { templateFunctor } from './name-template.js';
import { parseTaskRef } from './task-ref.js';
import { notBeforeOf } from './when.js';

/** What an engine knows about its world: limits, defaults, layout. */
export type WorldContext = Awaited<ReturnType<Engine['context']>>;

/** One task to queue, as a `queue --from` line or built from `queue`'s flags. */
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
  /** Not started before this time (ms since the epoch), from `--delay`/`--at` or `delay`/`at`. */
  notBefore?: number;
}

/** The fields a `--from` line may have. */
export const SPEC_FIELDS: readonly string[] = [
  'name',
  'type',
  'data',
  'parent',
  'childName',
  'priority',
  'hints',
  'attempts',
  'delay',
  'at',
];

function queueOptions(spec: TaskSpec): QueueOptions {
  const options: QueueOptions = {};
  if (spec.priority !== undefined) options.priority = spec.priority;
  if (spec.hints !== undefined) options.hints = spec.hints;
  if (spec.attempts !== undefined) options.maxAttempts = spec.attempts;
  if (spec.notBefore !== undefined) options.notBefore = spec.notBefore;
  return options;
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
  const functor = spec.childName ? templateFunctor(spec.childName, pattern) : null;
  return engine.queue(info, parent, functor, queueOptions(spec));
}

/** Checks one `--from` line's shape; `checkSpec` checks the rest. */
export function specFromLine(value: unknown, where: string): TaskSpec {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(`${where}: each line must be a JSON object {"name", "type", ...}`);
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields))
    if (!SPEC_FIELDS.includes(key))
      throw new CliError(
        `${where}: unknown field ${JSON.stringify(key)}`,
        ExitCode.USAGE,
        `fields: ${SPEC_FIELDS.join(', ')}`,
      );
  if (typeof fields.name !== 'string' || typeof fields.type !== 'string')
    throw new CliError(`${where}: "name" and "type" must be strings`);
  const parent = fields.parent;
  if (
    parent !== undefined &&
    typeof parent !== 'string' &&
    (typeof parent !== 'object' ||
      parent === null ||
      typeof (parent as { name?: unknown }).name !== 'string')
  )
    throw new CliError(
      `${where}: "parent" must be a task ("a|b") or a pattern {"name": "...", "type": "..."}`,
    );
  const { delay, at, ...rest } = fields;
  for (const [key, given] of [
    ['delay', delay],
    ['at', at],
  ] as const)
    if (given !== undefined && typeof given !== 'string')
      throw new CliError(
        `${where}: "${key}" must be a string, e.g. "30s" or "2026-11-26T12:00:00Z"`,
      );
  const notBefore = notBeforeOf(
    delay as string | undefined,
    at as string | undefined,
    Date.now(),
    where,
  );
  return (notBefore === undefined ? rest : { ...rest, notBefore }) as unknown as TaskSpec;
}

/**
 * Everything about one spec that can be known without writing: the task's name, type and
 * data, priority, attempts and hints, the parent reference or pattern, the child-name
 * template and the key it makes under an exact parent. Throws what is wrong. Returns the
 * key the spec queues when that is known before writing (top level, or under an exact
 * parent), `null` under a parent pattern.
 */
export function checkSpec(ctx: WorldContext, spec: TaskSpec): TaskKey | null {
  validateTaskInfo({ name: spec.name, type: spec.type, data: spec.data ?? null }, ctx.limits);
  resolveQueueOptions(ctx, queueOptions(spec));
  if (spec.childName !== undefined && spec.parent === undefined)
    throw new CliError('"childName" only applies with a "parent"');
  if (spec.parent === undefined) return [spec.name];
  if (typeof spec.parent === 'string') {
    const parent = parseTaskRef(spec.parent);
    const child = spec.childName
      ? templateFunctor(spec.childName)(parent[parent.length - 1]!, spec.name)
      : spec.name;
    const key = [...parent, child];
    validateKey(key, ctx.limits);
    return key;
  }
  compileParentPattern(spec.parent);
  if (spec.childName !== undefined) templateFunctor(spec.childName, spec.parent.name);
  return null;
}
