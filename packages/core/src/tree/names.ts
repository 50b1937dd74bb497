import { ZoottError } from '../contract/errors.js';
import { utf8 } from '../contract/paths.js';
import { RESERVED_WORLD_NAMES, WORLD_PREFIX } from './areas.js';
import { resolveLimits, type TaskLimits } from './limits.js';
import { show, typeOf } from './show.js';
import type { TaskInfo } from './task-map.js';

export { RESERVED_WORLD_NAMES } from './areas.js';

// ZooKeeper's PathUtils rejects these code points in any path; surrogates (and so every
// character outside the BMP) fall in the \ud800-\uf8ff range.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters to reject
const ZK_REJECTED = /[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/;
const WHITESPACE = /\s/;
const DEFAULT_WORLD_MAX_LENGTH = 200;

/**
 * The reason `name` is not a valid node name for zoott, or `null` when it is valid.
 * Shared by task names and world names.
 */
function nameProblem(name: unknown, maxLength: number): string | null {
  if (typeof name !== 'string') return `must be a string, got ${typeOf(name)}`;
  if (name.length === 0) return 'must not be empty';
  if (name.length > maxLength) return `must be at most ${maxLength} characters, got ${name.length}`;
  if (name === '.' || name === '..') return "must not be '.' or '..'";
  if (WHITESPACE.test(name)) return 'must not contain a space or other whitespace';
  if (name.includes('/')) return "must not contain '/'";
  if (name.includes('\\')) return "must not contain '\\'";
  if (name.includes('|')) return "must not contain '|'";
  if (ZK_REJECTED.test(name))
    return 'contains a character ZooKeeper rejects (control, surrogate or private-use)';
  return null;
}

/**
 * Checks one task name and returns it. Throws `INVALID_TASK` whose `field` is `field`
 * (default `'name'`) and whose message says what is wrong.
 */
export function validateTaskName(
  name: unknown,
  field = 'name',
  limits?: Partial<TaskLimits>,
): string {
  const problem = nameProblem(name, resolveLimits(limits).maxNameLength);
  if (problem !== null)
    throw new ZoottError('INVALID_TASK', `${field} ${show(name)}: ${problem}`, { field });
  return name as string;
}

/**
 * Checks a world name (the `<world>` of `/zoott_<world>`) and returns it. Same character
 * rules as task names, plus the reserved names of zoott's own areas. Throws
 * `INVALID_CONFIG` with `field: 'world'`: a world is configuration, not a task.
 */
export function validateWorldName(world: unknown): string {
  const bad = (why: string) =>
    new ZoottError('INVALID_CONFIG', `world ${show(world)}: ${why}`, { field: 'world' });
  const problem = nameProblem(world, DEFAULT_WORLD_MAX_LENGTH);
  if (problem !== null) throw bad(problem);
  if (RESERVED_WORLD_NAMES.includes(world as string))
    throw bad(
      `is reserved (${WORLD_PREFIX}${world as string} is one of zoott's own areas: ${RESERVED_WORLD_NAMES.join(', ')})`,
    );
  return world as string;
}

/**
 * Marks zoott's internal worlds (`<world>~races`, where race coordinators run): no world a
 * user names may contain it, so an internal world can never be a user's world and the
 * other way round (`init x-races` is an ordinary world; `x~races` is refused).
 */
export const INTERNAL_WORLD_MARK = '~';

/** What zoott's internal worlds serve: `<world>~races` coordinates the races of `<world>`. */
export const INTERNAL_WORLD_PURPOSES: readonly string[] = ['races'];

/** The internal world that serves `world` for `purpose` (e.g. `races`). */
export function internalWorldName(world: string, purpose: string): string {
  return `${world}${INTERNAL_WORLD_MARK}${purpose}`;
}

/** Whether a world is one of zoott's internal worlds (hidden from listings). */
export function isInternalWorld(world: string): boolean {
  return world.includes(INTERNAL_WORLD_MARK);
}

/**
 * {@link validateWorldName} for a world a user names (CLI, worker, dashboard): also refuses
 * the internal worlds' mark.
 */
export function validateUserWorldName(world: unknown): string {
  const name = validateWorldName(world);
  if (isInternalWorld(name))
    throw new ZoottError(
      'INVALID_CONFIG',
      `world ${show(world)}: must not contain '${INTERNAL_WORLD_MARK}', which marks zoott's internal worlds (race coordination)`,
      { field: 'world' },
    );
  return name;
}

/**
 * The world of an engine: a name users may give ({@link validateUserWorldName}, the rule of
 * the CLI, the worker and the dashboard), or one of zoott's internal worlds of such a world
 * (`<world>~races`, see {@link internalWorldName}). So a library user cannot make a world
 * the tools refuse and hide.
 */
export function validateEngineWorldName(world: unknown): string {
  const name = validateWorldName(world);
  const at = name.indexOf(INTERNAL_WORLD_MARK);
  const user = name.slice(0, at);
  if (at > 0 && INTERNAL_WORLD_PURPOSES.includes(name.slice(at + 1)) && !isInternalWorld(user)) {
    validateWorldName(user);
    return name;
  }
  return validateUserWorldName(name);
}

const TASK_FIELDS = new Set(['name', 'type', 'data']);

/**
 * Validates a producer's task description and returns a normalised copy holding only
 * `name`, `type` and (when present) `data`. Throws `INVALID_TASK` naming the field:
 * - `name`: see {@link validateTaskName};
 * - `type`: a non-empty string up to `maxTypeLength`, without control characters;
 * - `data`: plain JSON (objects, arrays, strings, finite numbers, booleans, null), no
 *   cycles, whose JSON encoding is at most `maxDataBytes` UTF-8 bytes;
 * - any other property is rejected, so a misspelt field is caught instead of dropped.
 */
export function validateTaskInfo(input: unknown, limits?: Partial<TaskLimits>): TaskInfo {
  const lim = resolveLimits(limits);
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new ZoottError('INVALID_TASK', `task info must be an object, got ${typeOf(input)}`, {
      field: 'taskInfo',
    });
  const obj = input as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!TASK_FIELDS.has(key))
      throw new ZoottError(
        'INVALID_TASK',
        `${key}: unknown task field (allowed: name, type, data; put your own values in data)`,
        { field: key },
      );
  }
  const name = validateTaskName(obj.name, 'name', lim);
  const type = validateTaskType(obj.type, lim);
  const info: TaskInfo = { name, type };
  if (obj.data !== undefined) {
    validateJsonData(obj.data, lim.maxDataBytes);
    info.data = obj.data;
  }
  return info;
}

export function validateTaskType(
  type: unknown,
  lim: TaskLimits = resolveLimits(undefined),
): string {
  const bad = (why: string) =>
    new ZoottError('INVALID_TASK', `type ${show(type)}: ${why}`, { field: 'type' });
  if (typeof type !== 'string') throw bad(`must be a string, got ${typeOf(type)}`);
  if (type.length === 0) throw bad('must not be empty');
  if (type.length > lim.maxTypeLength)
    throw bad(`must be at most ${lim.maxTypeLength} characters, got ${type.length}`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is rejected
  if (/[\u0000-\u001f\u007f]/.test(type)) throw bad('must not contain control characters');
  return type;
}

/** Nesting deeper than this is rejected before it can exhaust the stack of a JSON walker. */
const MAX_JSON_NESTING = 256;

/**
 * Throws `code` (default `INVALID_TASK`; field `data` or `data.<path>`) unless `data` is
 * plain JSON that encodes to at most `maxBytes` UTF-8 bytes.
 */
export function validateJsonData(
  data: unknown,
  maxBytes: number,
  field = 'data',
  code: 'INVALID_TASK' | 'INVALID_JOB' = 'INVALID_TASK',
): void {
  const bad = (where: string, why: string) =>
    new ZoottError(code, `${where}: ${why}`, { field: where });
  const seen = new Set<object>();
  const walk = (value: unknown, where: string, depth: number): void => {
    if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw bad(where, `${value} is not representable in JSON`);
      return;
    }
    if (typeof value !== 'object')
      throw bad(where, `${typeOf(value)} is not representable in JSON`);
    if (depth > MAX_JSON_NESTING) throw bad(where, `nested deeper than ${MAX_JSON_NESTING} levels`);
    if (seen.has(value)) throw bad(where, 'contains a cycle');
    seen.add(value);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) walk(value[i], `${where}[${i}]`, depth + 1);
    } else {
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null)
        throw bad(where, 'only plain objects are JSON (got a class instance; convert it first)');
      // Like JSON.stringify, a property whose value is `undefined` is simply left out.
      for (const [key, property] of Object.entries(value))
        if (property !== undefined) walk(property, `${where}.${key}`, depth + 1);
    }
    seen.delete(value);
  };
  walk(data, field, 0);
  const bytes = utf8.encode(JSON.stringify(data)).length;
  if (bytes > maxBytes)
    throw bad(field, `JSON encoding is ${bytes} bytes, more than the limit of ${maxBytes}`);
}
