import { createEngine } from '@zoott/core';
import type { RegularJobResult } from '@zoott/core/jobs';
import { settled } from '@zoott/testing';
import { describe, expect, it } from 'vitest';
import { parseReport } from '../src/jobs/report-channel.js';
import { daemonOnZookeeper } from './daemon-on-zookeeper.js';

const WORLD = 'reports';

describe('progress and log lines of a JSON job (fd 3)', { timeout: 120_000 }, () => {
  const zk = daemonOnZookeeper({
    world: WORLD,
    nodeId: 'reports-1',
    concurrency: 2,
    allowExec: ['/bin/*'],
  });

  it('stores what the job writes to fd 3, apart from its output', async () => {
    const engine = createEngine(zk.client, { world: WORLD });
    const script = [
      'echo "progress 0.25" >&3',
      'echo "log fetched the index" >&3',
      'echo "progress {\\"done\\": 3, \\"of\\": 4}" >&3',
      'echo "just a line" >&3',
      'echo "progress not-json" >&3',
      'echo output',
    ].join('; ');
    await engine.queue({
      name: 'reporting',
      type: 'zoott.job',
      data: { executable: '/bin/sh', arguments: ['-c', script] },
    });
    const rec = await settled(zk.client, WORLD, ['reporting']);
    expect(rec.state, JSON.stringify(rec.error)).toBe('completed');
    expect((rec.result as RegularJobResult).stdout).toBe('output\n');
    const p = await engine.progress(['reporting']);
    expect(p).toMatchObject({ attempt: 1, progress: { done: 3, of: 4 }, dropped: 0 });
    expect(p?.log.map((l) => l.line)).toEqual([
      'fetched the index',
      'just a line',
      'progress not-json',
    ]);
  });

  it('a job that writes nothing there leaves no progress node', async () => {
    const engine = createEngine(zk.client, { world: WORLD });
    await engine.queue({
      name: 'silent',
      type: 'zoott.job',
      data: { executable: '/bin/echo', arguments: ['hi'] },
    });
    expect((await settled(zk.client, WORLD, ['silent'])).state).toBe('completed');
    expect(await engine.progress(['silent'])).toBeNull();
  });
});

describe('the report line protocol', () => {
  it('reads progress JSON and log text; anything else is a log line', () => {
    expect(parseReport('progress 0.5')).toEqual({ progress: 0.5 });
    expect(parseReport('progress {"a":1}\r')).toEqual({ progress: { a: 1 } });
    expect(parseReport('log two  spaces kept')).toEqual({ log: 'two  spaces kept' });
    expect(parseReport('log')).toEqual({ log: '' });
    expect(parseReport('progress')).toEqual({ log: 'progress' });
    expect(parseReport('progress 50%')).toEqual({ log: 'progress 50%' });
    expect(parseReport('hello')).toEqual({ log: 'hello' });
    expect(parseReport('   ')).toBeNull();
  });
});
