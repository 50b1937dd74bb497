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
