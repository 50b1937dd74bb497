import type { Engine } from '@zoott/core';
import { queueSpec } from '../task-spec.js';
import { hashOf } from './sample-handlers.js';

/** Task type of the built-in regular JSON job (run by @zoott/jobs' job handlers). */
export const JOB_TYPE = 'zoott.job';

/** The demo's items: `f01`, `f02`, ... */
export function itemNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `f${String(i + 1).padStart(2, '0')}`);
}

// The regular job: a real process (node itself, so it runs wherever zoott does) that reads
// the downloaded "file" on stdin and prints its size and SHA-256.
const CHECKSUM_SCRIPT =
  "const c=require('crypto').createHash('sha256');let n=0;" +
  "process.stdin.on('data',d=>{n+=d.length;c.update(d)}).on('end',()=>console.log(n+' bytes sha256 '+c.digest('hex').slice(0,16)))";

/**
 * Queues the sample world: `requestFile_<item>` at the top, one `downloadFile_<item>` under
 * every request (one queue call, children matched to parents by pattern, named by a
 * template), and under each download a `processFile_<item>` that is a regular JSON job
 * running an executable. Returns how many tasks were queued.
 */
export async function queueSampleWorld(engine: Engine, items: string[]): Promise<number> {
  let queued = 0;
  for (let i = 0; i < items.length; i += 16) {
    const batch = items.slice(i, i + 16);
    const done = await Promise.all(
      batch.map((item) =>
        queueSpec(engine, {
          name: `requestFile_${item}`,
          type: 'requestFile',
          data: { url: `https://example.org/data/${item}.csv` },
        }),
      ),
    );
    queued += done.flat().length;
  }
  queued += (
    await queueSpec(engine, {
      name: 'downloadFile',
      type: 'downloadFile',
      data: { mirror: 'mirror-1' },
      parent: { name: 'requestFile_(.*)', type: 'requestFile' },
      childName: 'downloadFile_{1}',
    })
  ).length;
  for (let i = 0; i < items.length; i += 16) {
    const done = await Promise.all(
      items.slice(i, i + 16).map((item) =>
        queueSpec(engine, {
          name: `processFile_${item}`,
          type: JOB_TYPE,
          parent: `requestFile_${item}|downloadFile_${item}`,
          data: {
            executable: process.execPath,
            arguments: ['-e', CHECKSUM_SCRIPT],
            stdin: `id,value\n${item},${hashOf(item)}\n`.repeat(1 + (hashOf(item) % 50)),
            item,
          },
        }),
      ),
    );
    queued += done.flat().length;
  }
  return queued;
}
