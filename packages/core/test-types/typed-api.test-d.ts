// Compile-time tests of the typed API, built by `tsc --build` (so `pnpm build` fails when
// one fails). Each `@ts-expect-error` line must be a type error: if a change lets the wrong
// code compile, the unused directive is itself an error. They import the package by name,
// as a user does, so they see the published declarations.
import {
  type Claim,
  type Coordinator,
  createEngine,
  type Engine,
  type Handlers,
  runWorker,
  type TaskContext,
  type TaskInfo,
  type TaskRecord,
  type TaskResult,
  type WorkerHandle,
} from '@zoott/core';
import { expectTypeOf } from 'vitest';

interface FileTasks {
  request: { data: { url: string }; result: { size: number } };
  download: { data: { url: string; size: number }; result: { path: string } };
  ping: { result: 'pong' };
}

declare const zk: Coordinator;

export async function queueing(): Promise<void> {
  const engine = createEngine<FileTasks>(zk, { world: 'files' });
  expectTypeOf(engine).toEqualTypeOf<Engine<FileTasks>>();

  // The named form.
  await engine.queue({ name: 'a', type: 'request', data: { url: 'https://x/a' } });
  await engine.queue({
    name: 'download',
    type: 'download',
    data: { url: 'https://x/a', size: 1 },
    parent: { name: 'a.*', type: 'request' },
    childName: (parent, child) => `${child}_${parent}`,
    priority: 5,
    maxAttempts: 2,
  });
  await engine.queue({ name: 'p', type: 'ping' });
  // @ts-expect-error a misspelt field
  await engine.queue({ nmae: 'a', type: 'request', data: { url: 'x' } });
  // @ts-expect-error a type the map does not have
  await engine.queue({ name: 'a', type: 'reqest', data: { url: 'x' } });
  // @ts-expect-error data of the wrong type
  await engine.queue({ name: 'a', type: 'request', data: { url: 1 } });
  // @ts-expect-error data is required when the map's data type does not admit undefined
  await engine.queue({ name: 'a', type: 'request' });
  // @ts-expect-error another type's data
  await engine.queue({ name: 'a', type: 'request', data: { url: 'x', size: 1 } });
  // @ts-expect-error an option of the wrong type
  await engine.queue({ name: 'p', type: 'ping', priority: 'high' });
  // @ts-expect-error an unknown option
  await engine.queue({ name: 'p', type: 'ping', priorty: 1 });

  // The positional form of the original zoott.
  await engine.queue(
    { name: 'download', type: 'download', data: { url: 'u', size: 2 } },
    { name: 'a' },
    (parent, child) => `${child}_${parent}`,
    { priority: 1 },
  );
  await engine.queue({ name: 'p', type: 'ping' }, { key: ['a'] }, null);
  // @ts-expect-error a misspelt field
  await engine.queue({ name: 'p', tpye: 'ping' }, null);
  // @ts-expect-error options belong in the fourth argument of the positional form
  await engine.queue({ name: 'p', type: 'ping', priority: 1 }, null);
  // @ts-expect-error data of the wrong type
  await engine.queue({ name: 'd', type: 'download', data: { url: 'u' } }, { name: 'a' });

  // Two forms of queue: a wrong option in the named form is reported as that option's
  // mistake (a string where a number goes), not as a field the positional form lacks.
  // type-errors.test.ts checks the message; here it must stay an error.
  // @ts-expect-error priority must be a number
  await engine.queue({ name: 'p', type: 'ping', priority: 'high', data: undefined });

  expectTypeOf<TaskInfo<FileTasks, 'request'>>().toEqualTypeOf<{
    name: string;
    type: 'request';
    data: { url: string };
  }>();
}

export async function queueingMany(): Promise<void> {
  const engine = createEngine<FileTasks>(zk, { world: 'files' });
  await engine.queueMany([
    { name: 'a', type: 'request', data: { url: 'https://x/a' } },
    { name: 'b', type: 'download', data: { url: 'https://x/b', size: 2 }, parent: { key: ['a'] } },
    { name: 'p', type: 'ping', priority: 3 },
  ]);
  await engine.queueMany([
    { name: 'a', type: 'request', data: { url: 'https://x/a' } },
    // @ts-expect-error in a mixed array, a download carrying a request's data
    { name: 'b', type: 'download', data: { url: 'https://x/b' } },
  ]);
  await engine.queueMany([
    { name: 'p', type: 'ping' },
    // @ts-expect-error in a mixed array, a request carrying a download's data
    { name: 'a', type: 'request', data: { url: 'https://x/a', size: 1 } },
  ]);
  await engine.queueMany([
    { name: 'p', type: 'ping' },
    // @ts-expect-error in a mixed array, a misspelt option
    { name: 'a', type: 'request', data: { url: 'https://x/a' }, prority: 1 },
  ]);
  await engine.queueMany([
    { name: 'a', type: 'request', data: { url: 'https://x/a' } },
    // @ts-expect-error queueMany takes exact parents only, no patterns
    { name: 'b', type: 'download', data: { url: 'u', size: 1 }, parent: { name: 'a.*' } },
  ]);
}

export function withoutAMap(): void {
  // No map: any type name and any data, as before maps existed; a misspelt field still fails.
  const engine = createEngine(zk, { world: 'w' });
  void engine.queue({ name: 'x', type: 'anything', data: { any: [1, 'json'] } });
  void engine.queue({ name: 'y', type: 'other' }, { name: 'x' }, (p, c) => `${c}_${p}`);
  // @ts-expect-error a misspelt field
  void engine.queue({ nmae: 'x', type: 'anything' });
  expectTypeOf<TaskInfo>().toEqualTypeOf<{ name: string; type: string; data?: unknown }>();
  expectTypeOf<TaskContext['data']>().toEqualTypeOf<unknown>();
  const handlers: Handlers = { anything: (t) => t.data, other: () => undefined };
  const worker = runWorker(zk, handlers, { world: 'w' });
  expectTypeOf(worker).toEqualTypeOf<WorkerHandle>();
  const asRecord: Record<string, (task: TaskContext) => unknown> = handlers;
  void asRecord;
}

export function handlers(): void {
  const engine = createEngine<FileTasks>(zk, { world: 'files' });
  // The engine's map types the handlers: each gets its type's data.
  runWorker(
    zk,
    {
      request: async (task) => {
        expectTypeOf(task.data).toEqualTypeOf<{ url: string }>();
        expectTypeOf(task.type).toEqualTypeOf<'request'>();
        return { size: task.data.url.length };
      },
      ping: () => 'pong' as const,
    },
    { world: 'files', engine },
  );
  runWorker(
    zk,
    {
      // @ts-expect-error a handler returning the wrong result
      request: async () => ({ size: 'big' }),
    },
    { world: 'files', engine },
  );
  runWorker<FileTasks>(
    zk,
    {
      // @ts-expect-error a handler for a type the map does not have
      reqest: async () => ({ size: 1 }),
    },
    { world: 'files' },
  );
  runWorker<FileTasks>(
    zk,
    {
      // @ts-expect-error a handler that reads data the type does not have
      download: async (task) => ({ path: task.data.nope }),
    },
    { world: 'files' },
  );
  const typed: Handlers<FileTasks> = { download: async (t) => ({ path: `/tmp/${t.data.size}` }) };
  void typed;
}

export async function records(): Promise<void> {
  const engine = createEngine<FileTasks>(zk, { world: 'files' });
  const rec = await engine.task(['a']);
  expectTypeOf(rec).toEqualTypeOf<TaskRecord<FileTasks> | null>();
  if (rec?.type === 'request') {
    expectTypeOf(rec.data).toEqualTypeOf<{ url: string } | undefined>();
    expectTypeOf(rec.result).toEqualTypeOf<{ size: number } | undefined>();
  }
  if (rec?.type === 'download') {
    // @ts-expect-error a download has no size in its result
    void rec.result?.size;
  }

  const claim = await engine.claim();
  expectTypeOf(claim).toEqualTypeOf<Claim<FileTasks> | null>();
  if (claim?.type === 'request') {
    expectTypeOf(claim.data).toEqualTypeOf<{ url: string }>();
    await engine.complete(claim, { size: 3 });
    // @ts-expect-error another type's result
    await engine.complete(claim, { path: '/tmp/a' });
  }
}

export function workerEvents(): void {
  const engine = createEngine<FileTasks>(zk, { world: 'files' });
  const worker = runWorker(zk, { ping: () => 'pong' as const }, { world: 'files', engine });
  expectTypeOf(worker).toEqualTypeOf<WorkerHandle<FileTasks>>();
  const off = worker.on('completed', (e) => {
    if (e.type === 'download') expectTypeOf(e.result).toEqualTypeOf<{ path: string }>();
    if (e.type === 'request') expectTypeOf(e.data).toEqualTypeOf<{ url: string }>();
  });
  expectTypeOf(off).toEqualTypeOf<() => void>();
  worker.on('failed', (e) => {
    expectTypeOf(e.error.message).toEqualTypeOf<string>();
    expectTypeOf(e.final).toEqualTypeOf<boolean>();
  });
  worker.once('drained', (e) => expectTypeOf(e.stats.completed).toEqualTypeOf<number>());
  worker.on('error', (e) => expectTypeOf(e.message).toEqualTypeOf<string>());
  // @ts-expect-error no such event
  worker.on('finished', () => {});
  worker.on('completed', (e) => {
    // @ts-expect-error a completed event has no error
    void e.error;
  });
}

export function taskMaps(): void {
  interface Misspelt {
    request: { reslt: number };
  }
  // @ts-expect-error a map entry with a misspelt field
  createEngine<Misspelt>(zk, { world: 'w' });
  interface MisspeltBesideData {
    request: { data: { url: string }; reslt: number };
    ping: { result: 'pong' };
  }
  // @ts-expect-error a misspelt field next to a correct one
  createEngine<MisspeltBesideData>(zk, { world: 'w' });
  // @ts-expect-error the same map given to runWorker
  runWorker<MisspeltBesideData>(zk, { ping: () => 'pong' as const }, { world: 'w' });
  interface MisspeltInLaterEntry {
    ping: { result: 'pong' };
    request: { data: { url: string }; result: { size: number }; dta: string };
  }
  // @ts-expect-error a misspelt field in any entry of the map
  createEngine<MisspeltInLaterEntry>(zk, { world: 'w' });
  interface UnknownParent {
    request: { data: { url: string } };
    download: { parent: 'reqest' };
  }
  // @ts-expect-error a parent type the map does not have
  createEngine<UnknownParent>(zk, { world: 'w' });
}

export function parentResults(): void {
  interface Pipeline {
    request: { data: { url: string }; result: { url: string; size: number } };
    mirror: { result: { url: string; size: number; mirror: string } };
    download: { parent: 'request'; result: { path: string } };
    process: { parent: 'download'; result: { lines: number } };
    report: { parent: 'request' | 'mirror'; result: string };
    free: { result: number };
  }
  const engine = createEngine<Pipeline>(zk, { world: 'pipeline' });
  runWorker(
    zk,
    {
      download: async (task) => {
        // The child's declared parent type gives its parent's result type.
        const parent = await task.parentResult();
        expectTypeOf(parent).toEqualTypeOf<{ url: string; size: number } | undefined>();
        // @ts-expect-error the parent's result has no lines
        void parent?.lines;
        return { path: `/tmp/${parent?.size ?? 0}` };
      },
      process: async (task) => {
        const parent = await task.parentResult();
        expectTypeOf(parent).toEqualTypeOf<TaskResult<Pipeline, 'download'> | undefined>();
        return { lines: parent?.path.length ?? 0 };
      },
      report: async (task) => {
        const parent = await task.parentResult();
        expectTypeOf(parent).toEqualTypeOf<
          { url: string; size: number } | { url: string; size: number; mirror: string } | undefined
        >();
        return parent?.url ?? '';
      },
      free: async (task) => {
        // No parent declared: the caller says what it expects, as without a map.
        const parent = await task.parentResult<{ n: number }>();
        expectTypeOf(parent).toEqualTypeOf<{ n: number } | undefined>();
        return parent?.n ?? 0;
      },
    },
    { world: 'pipeline', engine },
  );
  runWorker(
    zk,
    {
      download: async (task) => {
        // @ts-expect-error a declared parent's result is not cast to something else
        const parent = await task.parentResult<{ lines: number }>();
        return { path: String(parent) };
      },
    },
    { world: 'pipeline', engine },
  );
}

export function handlersOfTheConstraint(): void {
  // Handlers typed from runWorker's own parameter (its map left to the constraint) go back in,
  // and a Record<string, ...> map is a map: only a known field is checked there.
  const handlers: Parameters<typeof runWorker>[1] = { ping: () => 'pong' };
  runWorker(zk, handlers, { world: 'w' });
  runWorker(zk, handlers, { world: 'w', engine: createEngine(zk, { world: 'w' }) });
  createEngine<Record<string, { data: { n: number } }>>(zk, { world: 'w' });
  // @ts-expect-error a misspelt field is still an error in an indexed map
  createEngine<Record<string, { dta: number }>>(zk, { world: 'w' });
}
