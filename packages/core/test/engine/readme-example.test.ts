import { createEngine, runWorker } from '@zoott/core';
import { MemoryServer } from '@zoott/memory-adapter';
import { expect, it } from 'vitest';

// The library example of the root README, kept true: same calls, same outcome.
it('the README example queues a tree and runs it through a worker', async () => {
  const zk = await new MemoryServer().connect();
  const engine = createEngine(zk, { world: 'files' });
  await engine.init();
  await engine.queue({ name: 'requestFile_a', type: 'request', data: { url: 'https://x/a' } });
  await engine.queue(
    { name: 'downloadFile', type: 'download' },
    { name: 'requestFile_.*' },
    (parent, child) => `${child}_${parent.split('_')[1]}`,
  );
  const order: string[] = [];
  const worker = runWorker(
    zk,
    {
      request: async (task) => {
        order.push(task.name);
        return { size: 42 };
      },
      download: async (task) => {
        order.push(task.name);
        return { saved: `/tmp/${task.name}` };
      },
    },
    { world: 'files', concurrency: 4 },
  );
  for (let i = 0; i < 200 && (await engine.counts()).completed < 2; i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
  await worker.stop();
  expect(order).toEqual(['requestFile_a', 'downloadFile_a']);
  expect(await engine.task(['requestFile_a', 'downloadFile_a'])).toMatchObject({
    state: 'completed',
    result: { saved: '/tmp/downloadFile_a' },
  });
  await zk.close();
});
