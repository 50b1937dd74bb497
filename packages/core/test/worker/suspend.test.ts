import { createEngine, runWorker } from '@zoott/core';
import { MemoryServer } from '@zoott/memory-adapter';
import { expect, it } from 'vitest';
import { CountingClock, idlePeriods } from './idle-clock.js';

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

// While its connection is down the worker cannot know whether its session lives, so it must
// not start anything new; once the same session is back it carries on.
it('a suspended worker claims nothing new, and resumes on reconnect', async () => {
  const server = new MemoryServer();
  const producer = await server.connect();
  const workerSession = await server.connect();
  const engine = createEngine(producer, { world: 'calm', buckets: 2 });
  await engine.init();
  const started: string[] = [];
  const clock = new CountingClock();
  const worker = runWorker(
    workerSession,
    { t: async (task) => void started.push(task.name) },
    { world: 'calm', clock, pollMs: 20, stealAfterMs: 10 },
  );
  await engine.queue({ name: 'before', type: 't' });
  await until(async () => (await engine.counts()).completed === 1, 'the first task');

  workerSession.disconnect();
  expect(workerSession.state).toBe('suspended');
  await engine.queue({ name: 'during', type: 't' });
  // Nothing may happen during many rounds of the worker's own loop (its sleeps, counted):
  // it must stay idle while suspended.
  await idlePeriods([clock], 15);
  expect(started).toEqual(['before']);
  expect(await engine.counts()).toMatchObject({ pending: 1, working: 0, completed: 1 });

  workerSession.reconnect();
  await until(async () => (await engine.counts()).completed === 2, 'the task queued meanwhile');
  expect(started).toEqual(['before', 'during']);
  await worker.stop();
  engine.close();
});
