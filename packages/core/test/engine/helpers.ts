import {
  type Coordinator,
  createEngine,
  type Engine,
  type EngineClock,
  type EngineLogger,
  type Op,
  type TreeListener,
  type WatchEvent,
  type WatchOptions,
} from '@zoott/core';
import { type Finding, repairWorld } from '@zoott/core/internal';
import { expect } from 'vitest';

/** A clock the test moves by hand; `sleep` yields to the event loop only. */
export class TestClock implements EngineClock {
  constructor(
    public t = 1_000_000,
    public rnd = 0.5,
  ) {}
  now(): number {
    return this.t;
  }
  async sleep(_ms: number, _signal?: AbortSignal): Promise<void> {
    await new Promise((r) => setTimeout(r, 1));
  }
  random(): number {
    return this.rnd;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** Collects warnings instead of printing them. */
export function memoryLogger(): EngineLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (_f, msg) => lines.push(msg), info: () => {} };
}

/** Counts requests by kind; `writes` counts create/set/delete/multi (a multi is one). */
export interface CallCounts {
  reads: number;
  writes: number;
  byMethod: Record<string, number>;
  /** Failed requests by `method:CODE`. */
  errors: Record<string, number>;
}

const READS = new Set(['get', 'exists', 'children', 'childrenWithStat', 'getAcl']);
const WRITES = new Set(['create', 'set', 'delete', 'multi', 'setAcl']);

/** Wraps a coordinator and counts every request it forwards. */
export function counting(c: Coordinator): { c: Coordinator; counts: CallCounts; ops: Op[][] } {
  const counts: CallCounts = { reads: 0, writes: 0, byMethod: {}, errors: {} };
  const ops: Op[][] = [];
  const proxy = new Proxy(c, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (READS.has(prop)) counts.reads++;
        if (WRITES.has(prop)) counts.writes++;
        if (prop === 'multi') ops.push(args[0] as Op[]);
        counts.byMethod[prop] = (counts.byMethod[prop] ?? 0) + 1;
        const out = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (out instanceof Promise) {
          out.catch((err: { code?: string }) => {
            const k = `${prop}:${err?.code ?? 'error'}`;
            counts.errors[k] = (counts.errors[k] ?? 0) + 1;
          });
        }
        return out;
      };
    },
  });
  return { c: proxy, counts, ops };
}

/** Polls `cond` until it holds (real time), failing after `ms`. */
export async function eventually(
  cond: () => boolean | Promise<boolean>,
  ms = 10_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

let counter = 0;
/** A world name unique in this process, so tests on one server never collide. */
export function worldName(prefix = 'w'): string {
  counter++;
  return `${prefix}${process.pid}x${counter}`;
}

/**
 * An initialised engine on a fresh world of `buckets` buckets, whose clock the test moves by
 * hand (a TestClock) and whose warnings are collected, not printed.
 */
export async function engineOnTestClock(
  c: Coordinator,
  buckets: number,
): Promise<{ engine: Engine; clock: TestClock; world: string }> {
  const world = worldName();
  const clock = new TestClock();
  const engine = createEngine(c, { world, buckets, clock, logger: memoryLogger() });
  await engine.init();
  return { engine, clock, world };
}

/**
 * An engine on `world` (of one bucket) through `c`, on a clock that stands still: a cached
 * listing is never old enough to be read again for its age.
 */
export function oneBucketEngine(c: Coordinator, world: string): Engine {
  return createEngine(c, { world, buckets: 1, clock: new TestClock(), logger: memoryLogger() });
}

/** A fresh, initialised world of one bucket, and an engine on it with a client of its own. */
export async function oneBucketWorld(
  connect: () => Promise<Coordinator>,
): Promise<{ world: string; other: Engine }> {
  const world = worldName();
  const other = createEngine(await connect(), { world, buckets: 1, logger: memoryLogger() });
  await other.init();
  return { world, other };
}

/**
 * {@link oneBucketWorld} holding p, its priority-10 child p/c and `roots` priority-0 roots,
 * queued by `other`.
 */
export async function parentAndChild(
  connect: () => Promise<Coordinator>,
  roots: number,
): Promise<{ world: string; other: Engine }> {
  const made = await oneBucketWorld(connect);
  await made.other.queue({ name: 'p', type: 't' });
  await made.other.queue({ name: 'c', type: 't', parent: { key: ['p'] }, priority: 10 });
  for (let i = 0; i < roots; i++) await made.other.queue({ name: `r${i}`, type: 't' });
  return made;
}

/**
 * Repairs `world` and checks that exactly the findings marked for quarantine were moved;
 * returns what was moved.
 */
export async function repairAll(
  c: Coordinator,
  world: string,
  findings: readonly Finding[],
): Promise<Awaited<ReturnType<typeof repairWorld>>['moved']> {
  const { moved, notMoved } = await repairWorld(c, world, findings);
  expect(notMoved).toEqual([]);
  expect(moved.map((m) => m.from).sort()).toEqual(
    findings
      .filter((f) => f.repair === 'quarantine')
      .map((f) => f.path)
      .sort(),
  );
  return moved;
}

/** Whether one multi both completes `parent` and claims `child` (a hand-off). */
export const handsOff = (ops: readonly Op[], parent: string, child: string): boolean =>
  ops.some(
    (o) => o.op === 'create' && o.path.startsWith('/zoott_c/') && o.path.endsWith(`/${parent}`),
  ) &&
  ops.some(
    (o) => o.op === 'create' && o.path.startsWith('/zoott_w/') && o.path.endsWith(`/${child}`),
  );

/**
 * `c` as an adapter (or a server) without tree watches shows it: no `watchTree`. A worker then
 * learns of new entries from listings alone, the path a test of listings must exercise.
 */
export function withoutTreeWatches(c: Coordinator): Coordinator {
  return new Proxy(c, {
    get(target, prop) {
      if (prop === 'watchTree') return undefined;
      const value = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * `raw` with its method `name` replaced by `make(original)` (the original bound to `raw`);
 * every other property as `raw` has it. How a test steps between the engine and the server.
 */
export function intercept<K extends keyof Coordinator>(
  raw: Coordinator,
  name: K,
  make: (original: Coordinator[K]) => Coordinator[K],
): Coordinator {
  const replaced = make((raw[name] as (...a: unknown[]) => unknown).bind(raw) as Coordinator[K]);
  return new Proxy(raw, {
    get(target, prop) {
      if (prop === name) return replaced;
      const value = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * `raw` whose next listing (`childrenWithStat`), once `hold()` was called, is held after the
 * server answered it: `hold()` resolves when one is held, `release()` lets it through. What
 * a claimer sees when a listing's reply lands late (its continuation runs after events that
 * came in behind it).
 */
export function holdingListings(raw: Coordinator): {
  coordinator: Coordinator;
  hold: () => Promise<void>;
  release: () => void;
} {
  let armed = false;
  let held = (): void => {};
  let release = (): void => {};
  const released = new Promise<void>((r) => {
    release = r;
  });
  const coordinator = intercept(raw, 'childrenWithStat', (list) => async (...args) => {
    const out = await list(...args);
    if (armed) {
      armed = false;
      held();
      await released;
    }
    return out;
  });
  const hold = () =>
    new Promise<void>((r) => {
      armed = true;
      held = r;
    });
  return { coordinator, hold, release };
}

/**
 * `raw` whose watch events (one-shot and tree watches), once `hold()` was called, reach the
 * engine only just before the reply of the first request it sends after that call: what a
 * client sees when a change's event is still on its way while it decides and sends a request.
 * ZooKeeper delivers such an event before the reply of any request it serves after the
 * change, which is where it is let through. `treeWatches()`: tree watches registered so far.
 */
export function delayingEvents(raw: Coordinator): {
  coordinator: Coordinator;
  hold: () => void;
  treeWatches: () => number;
} {
  let holding = false;
  let registered = 0;
  const waiting: Array<() => void> = [];
  const deliver = (event: () => void): void => {
    if (holding) waiting.push(event);
    else event();
  };
  const letThrough = (): void => {
    holding = false;
    for (const event of waiting.splice(0)) event();
  };
  const coordinator = new Proxy(raw, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      if (prop === 'watchTree')
        return async (path: string, listener: TreeListener) => {
          const stop = await target.watchTree!(path, (e) => deliver(() => listener(e)));
          registered++;
          return stop;
        };
      return (...args: unknown[]) => {
        const last = args.at(-1) as WatchOptions | undefined;
        const watch = typeof last === 'object' && last !== null ? last.watch : undefined;
        if (watch)
          args[args.length - 1] = { ...last, watch: (e: WatchEvent) => deliver(() => watch(e)) };
        const out = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!holding || !(out instanceof Promise)) return out;
        return out.then(
          (v) => {
            letThrough();
            return v;
          },
          (err: unknown) => {
            letThrough();
            throw err;
          },
        );
      };
    },
  });
  return {
    coordinator,
    hold: () => {
      holding = true;
    },
    treeWatches: () => registered,
  };
}
