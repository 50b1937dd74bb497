/**
 * The bad input catalogue, on a real ZooKeeper with a real worker daemon serving
 * the world: each bad input gets a clear error (a ZoottError naming the field and why) or is
 * moved to the failed area with the reason; nothing else changes, and the worker neither
 * crashes nor loops (it completes a good task afterwards, with no loop errors logged).
 */
import { userInfo } from 'node:os';
import {
  type Coordinator,
  createEngine,
  type Engine,
  isZoottError,
  utf8,
  type ZoottError,
} from '@zoott/core';
import { submitJob, type WorkerDaemon } from '@zoott/jobs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LogLine, loopErrors, startDaemon } from './support/daemon.js';
import { until, type ZkNamespace, zkNamespace } from './support/zk.js';
import { zkCliCreate } from './support/zkcli.js';

const WORLD = 'bad';
const quiet = { warn: () => {} };

async function rejection(p: Promise<unknown>): Promise<ZoottError> {
  try {
    await p;
  } catch (err) {
    if (isZoottError(err)) return err;
    throw new Error(`expected a ZoottError, got ${String(err)}`);
  }
  throw new Error('expected a rejection, but the call succeeded');
}

describe('bad input catalogue [zookeeper + worker daemon]', () => {
  let ns: ZkNamespace;
  let producer: Coordinator;
  let engine: Engine;
  let daemon: WorkerDaemon;
  let lines: LogLine[];
  let good = 0;

  /** Every task the world holds, to prove a rejected input changed nothing. */
  const snapshot = async () => JSON.stringify([await engine.list(), await engine.tree()]);

  /** The worker still works: a fresh good task completes. */
  const workerStillWorks = async () => {
    const name = `good-${good++}`;
    await engine.queue({ name, type: 'echo', data: { n: good } });
    await until(
      `${name} completes`,
      async () => (await engine.task([name]))?.state === 'completed',
    );
    expect(loopErrors(lines)).toEqual([]);
  };

  beforeAll(async () => {
    ns = await zkNamespace();
    producer = await ns.connect();
    engine = createEngine(producer, { world: WORLD, buckets: 1, logger: quiet });
    await engine.init();
    ({ daemon, lines } = await startDaemon({
      connect: ns.connectString,
      world: WORLD,
      nodeId: 'bad-input-worker',
      handlers: { echo: (t) => ({ echoed: t.data }) },
      allowExec: ['/usr/bin/echo', '/nonexistent/*'],
      // Jobs run as the test's own user (a root worker needs to be told).
      runAs: userInfo().username,
      concurrency: 2,
      localityWaitMs: 0,
    }));
    await workerStillWorks();
  });
  afterAll(async () => {
    await daemon?.stop();
    engine?.close();
    await ns?.cleanup();
  });

  it('names with forbidden characters: INVALID_TASK naming the name, nothing queued', async () => {
    const before = await snapshot();
    for (const name of [
      'a/b',
      'a|b',
      'a b',
      'tab\there',
      'nl\n',
      '.',
      '..',
      '',
      'nul\u0000',
      'sur\ud800',
      'pua\ue000',
    ]) {
      const err = await rejection(engine.queue({ name, type: 'echo' }));
      expect(err.code).toBe('INVALID_TASK');
      expect(err.field).toBe('name');
      expect(err.message).toContain(`name ${JSON.stringify(name)}`);
    }
    const typeErr = await rejection(engine.queue({ name: 'ok', type: 'bad\u0001type' }));
    expect([typeErr.code, typeErr.field]).toEqual(['INVALID_TASK', 'type']);
    expect(await snapshot()).toBe(before);
    await workerStillWorks();
  });

  it('over-long names and paths: INVALID_TASK with the limit, nothing queued', async () => {
    const before = await snapshot();
    const long = await rejection(engine.queue({ name: 'n'.repeat(201), type: 'echo' }));
    expect([long.code, long.field]).toEqual(['INVALID_TASK', 'name']);
    expect(long.message).toContain('at most 200 characters');
    const longType = await rejection(engine.queue({ name: 'ok', type: 't'.repeat(201) }));
    expect([longType.code, longType.field]).toEqual(['INVALID_TASK', 'type']);
    const deep = Array.from({ length: 33 }, (_, i) => `d${i}`);
    const tooDeep = await rejection(engine.queue({ name: 'leaf', type: 'echo' }, { key: deep }));
    expect(tooDeep.code).toBe('INVALID_TASK');
    expect(tooDeep.message).toContain('33 levels deep');
    expect(await snapshot()).toBe(before);
    await workerStillWorks();
  });

  it('non-object task info and non-JSON data: INVALID_TASK naming the field', async () => {
    const before = await snapshot();
    for (const info of ['a string', 42, null, [], true]) {
      // What a JavaScript caller can pass; TypeScript refuses it at compile time.
      const err = await rejection(engine.queue(info as unknown as { name: string; type: string }));
      expect([err.code, err.field]).toEqual(['INVALID_TASK', 'taskInfo']);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const data of [
      () => 1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      10n,
      Symbol('s'),
      cyclic,
      { deep: { x: undefined, f: () => 1 } },
    ]) {
      const err = await rejection(engine.queue({ name: 'x', type: 'echo', data }));
      expect(err.code).toBe('INVALID_TASK');
      expect(err.field).toMatch(/^data/);
    }
    // Positionally, task info holds only name, type and data: an option field is refused there.
    const optionInInfo = await rejection(
      engine.queue(
        { name: 'x', type: 'echo', priority: 3 } as { name: string; type: string },
        null,
      ),
    );
    expect([optionInInfo.code, optionInInfo.field]).toEqual(['INVALID_TASK', 'priority']);
    // One argument is the named form, where priority is an option; a field it does not know is
    // refused, named.
    const unknownField = await rejection(
      engine.queue({ name: 'x', type: 'echo', colour: 'red' } as { name: string; type: string }),
    );
    expect([unknownField.code, unknownField.field]).toEqual(['INVALID_TASK', 'colour']);
    expect(await snapshot()).toBe(before);
    await workerStillWorks();
  });

  it('data over the node limit: INVALID_TASK before anything is written, DATA_TOO_LARGE at the adapter', async () => {
    const before = await snapshot();
    const big = await rejection(
      engine.queue({ name: 'big', type: 'echo', data: 'x'.repeat(600 * 1024) }),
    );
    expect([big.code, big.field]).toEqual(['INVALID_TASK', 'data']);
    expect(big.message).toContain('more than the limit');
    const raw = await rejection(producer.create('/huge', new Uint8Array(1_100_000)));
    expect(raw.code).toBe('DATA_TOO_LARGE');
    expect(await producer.exists('/huge')).toBeNull();
    expect(await snapshot()).toBe(before);
    await workerStillWorks();
  });

  it('invalid regular expressions (not RE2 syntax): INVALID_PATTERN naming the pattern', async () => {
    const before = await snapshot();
    for (const name of ['(', '[a-', '*', 'a{2,1}', '(?<n>a)\\k<m>', '(a)\\1', 'a(?=b)']) {
      const err = await rejection(engine.queue({ name: 'c', type: 'echo' }, { name }));
      expect([err.code, err.field]).toEqual(['INVALID_PATTERN', 'parent.name']);
      expect(err.message, name).toContain(JSON.stringify(name));
    }
    const typeErr = await rejection(
      engine.queue({ name: 'c', type: 'echo' }, { name: 'a+', type: '(' }),
    );
    expect([typeErr.code, typeErr.field]).toEqual(['INVALID_PATTERN', 'parent.type']);
    expect(await snapshot()).toBe(before);
    await workerStillWorks();
  });

  it('patterns that backtrack exponentially elsewhere match in linear time against long names', async () => {
    // Parents whose names almost match: a backtracking engine tries every split of the
    // a's before failing on the last character (2^36 ways for the first pattern).
    await engine.queue({ name: `${'a'.repeat(36)}!`, type: 'parked' });
    await engine.queue({ name: `${'a'.repeat(199)}!`, type: 'parked' });
    const before = await snapshot();
    for (const name of [
      '(?:a|a)'.repeat(36),
      '(a+)+$',
      '(a|aa)*c',
      '(a*)*b',
      '(\\w+\\s?)*#',
      '^(a|a?)+$',
      '(.*a){12}',
    ]) {
      const started = performance.now();
      expect(await engine.queue({ name: 'c', type: 'echo' }, { name }), name).toEqual([]);
      // Guards against exponential blow-up (minutes before), so generous on a busy machine:
      // 10 s still tells linear matching from backtracking.
      expect(performance.now() - started, name).toBeLessThan(10_000);
    }
    expect(await snapshot()).toBe(before);
    await workerStillWorks();
  });

  it('job JSON of the wrong shape: INVALID_JOB at submit; queued raw, the worker fails it at once with the reason', async () => {
    const before = await snapshot();
    for (const job of [
      {},
      { executable: 5 },
      { executable: '/usr/bin/echo', arguments: 'not-a-list' },
      'echo hi',
      [1, 2],
      { executable: '/usr/bin/echo', timeoutMs: -1 },
    ]) {
      const err = await rejection(submitJob(producer, job, { world: WORLD }));
      expect(err.code).toBe('INVALID_JOB');
      expect(err.message.length).toBeGreaterThan(10);
    }
    expect(await snapshot()).toBe(before);
    // Another producer that skips validation: the job reaches the worker.
    await engine.queue({ name: 'raw-job', type: 'zoott.job', data: { arguments: ['x'] } });
    await until(
      'raw-job is failed',
      async () => (await engine.task(['raw-job']))?.state === 'failed',
    );
    const rec = await engine.task(['raw-job']);
    expect(rec?.error?.code).toBe('INVALID_JOB');
    expect(rec?.error?.message).toContain('executable');
    expect(rec?.attempts).toBe(1);
    await workerStillWorks();
  });

  it('an executable outside --allow-exec is refused with INVALID_JOB naming it and the policy', async () => {
    const { key } = await submitJob(
      producer,
      { executable: '/bin/sh', arguments: ['-c', 'echo pwned'] },
      { world: WORLD, name: 'sh-job' },
    );
    await until('sh-job is failed', async () => (await engine.task(key))?.state === 'failed');
    const rec = await engine.task(key);
    expect(rec?.error?.code).toBe('INVALID_JOB');
    expect(rec?.error?.message).toContain('/bin/sh');
    expect(rec?.error?.message).toContain('--allow-exec');
    await workerStillWorks();
  });

  it('a missing executable: a clear error in the result, the worker carries on', async () => {
    const { key } = await submitJob(
      producer,
      { executable: '/nonexistent/tool', arguments: [] },
      { world: WORLD, name: 'missing-exe' },
    );
    await until('missing-exe ends', async () => {
      const s = (await engine.task(key))?.state;
      return s === 'completed' || s === 'failed';
    });
    const rec = await engine.task(key);
    const text = JSON.stringify(rec?.state === 'completed' ? rec.result : rec?.error);
    expect(text).toContain('/nonexistent/tool');
    if (rec?.state === 'completed') {
      const result = rec.result as { exit?: number; error?: string; pid?: number };
      expect(result).not.toHaveProperty('exit');
      expect(result.error).toMatch(/ENOENT|not found|no such file/i);
      expect(result.pid).toBe(0);
    } else expect(rec?.error?.message).toMatch(/ENOENT|not found|no such file/i);
    expect(daemon.processes.size).toBe(0);
    await workerStillWorks();
  });

  it('a garbage node written into the pending area by another client (zkCli.sh) is ignored', async () => {
    const before = await snapshot();
    const countsBefore = await engine.counts();
    const bucket = `${ns.chroot}/zoott_p/${WORLD}/0000`;
    await zkCliCreate(ns.server, `${bucket}/garbage`, 'not-json{');
    await zkCliCreate(ns.server, `${bucket}/q-not-an-entry`, '{"name":1}');
    // Foreign nodes are not tasks: the task list, tree and counts are as they were.
    expect(await snapshot()).toBe(before);
    expect(await engine.counts()).toEqual(countsBefore);
    await workerStillWorks();
    expect(await producer.get(`/zoott_p/${WORLD}/0000/garbage`)).toMatchObject({
      data: utf8.encode('not-json{'),
    });
  });
});

describe('a garbage entry-shaped node in a pending bucket [zookeeper + worker daemon]', () => {
  it('skips a node named like an entry whose data is not JSON, logs it once, and runs the rest', async () => {
    const ns = await zkNamespace();
    const producer = await ns.connect();
    const engine = createEngine(producer, { world: 'junk', buckets: 1, logger: quiet });
    await engine.init();
    // Another client writes a node whose NAME looks like an entry but whose data is not JSON.
    const junk = `/zoott_p/junk/0000/q1000000-junk-0000000001`;
    await zkCliCreate(ns.server, `${ns.chroot}${junk}`, 'not-json{');
    await engine.queue({ name: 'good', type: 'echo' });
    const { daemon, lines } = await startDaemon({
      connect: ns.connectString,
      world: 'junk',
      nodeId: 'junk-worker',
      handlers: { echo: () => 'ok' },
    });
    try {
      await until(
        'the good task completes',
        async () => (await engine.task(['good']))?.state === 'completed',
        15_000,
      );
      await engine.queue({ name: 'later', type: 'echo' });
      await until(
        'a later task completes',
        async () => (await engine.task(['later']))?.state === 'completed',
        15_000,
      );
      expect(loopErrors(lines)).toEqual([]);
      const skipped = lines.filter(
        (l) => l.msg === 'skipping a pending node that is not a zoott entry',
      );
      expect(skipped).toHaveLength(1);
      expect(JSON.stringify(skipped[0]!.fields)).toContain('q1000000-junk-0000000001');
      // Nothing else changed: the node is still there, untouched.
      expect(utf8.decode((await producer.get(junk)).data)).toBe('not-json{');
    } finally {
      await daemon.stop();
      engine.close();
      await ns.cleanup();
    }
  }, 60_000);
});
