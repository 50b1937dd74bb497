import { createEngine, utf8 } from '@zoott/core';
import type { EntryData } from '@zoott/core/internal';
import { MemoryServer } from '@zoott/memory-adapter';
import { expect, it } from 'vitest';
import { memoryLogger, TestClock, worldName } from './helpers.js';

// The mark a queue call leaves on its entry (to find it after a lost reply) takes its time and
// randomness from the engine's clock, and stays unique under a clock that repeats itself.
it("marks each queued entry with the engine clock's time, uniquely", async () => {
  const c = await new MemoryServer().connect();
  const clock = new TestClock(1_234_567, 0.25);
  const world = worldName();
  const engine = createEngine(c, { world, buckets: 1, clock, logger: memoryLogger() });
  await engine.init();
  await engine.queue({ name: 'a', type: 't' });
  await engine.queue({ name: 'b', type: 't' });
  const bucket = `/zoott_p/${world}/0000`;
  const marks = await Promise.all(
    (await c.children(bucket)).map(async (name) => {
      const entry = JSON.parse(utf8.decode((await c.get(`${bucket}/${name}`)).data)) as EntryData;
      return entry.qid ?? '';
    }),
  );
  expect(marks).toHaveLength(2);
  for (const mark of marks) expect(mark.startsWith((1_234_567).toString(36))).toBe(true);
  expect(new Set(marks).size).toBe(2);
  engine.close();
  await c.close();
});

// The count of queue calls is the engine's, not the process's: two engines sharing one test
// clock (same time, same random) count alike, and their tag is what keeps their marks apart.
// Equal marks would let one engine, after a lost reply, take the other's entry for its own.
it('two engines on one test clock mark entries for the same key differently', async () => {
  const c = await new MemoryServer().connect();
  const clock = new TestClock(1_234_567, 0.25);
  const marks: string[] = [];
  const engines = [];
  for (let i = 0; i < 2; i++) {
    // Each in its own world, so both write the same key at the same clock time.
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 1, clock, logger: memoryLogger() });
    engines.push(engine);
    await engine.init();
    await engine.queue({ name: 'a', type: 't' });
    const bucket = `/zoott_p/${world}/0000`;
    const [name] = await c.children(bucket);
    const entry = JSON.parse(utf8.decode((await c.get(`${bucket}/${name}`)).data)) as EntryData;
    marks.push(entry.qid ?? '');
  }
  expect(marks[0]).not.toBe('');
  expect(marks[1]).not.toBe(marks[0]);
  for (const engine of engines) engine.close();
  await c.close();
});
