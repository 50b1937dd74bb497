import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { freshNamespace, settled } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { killWorkers, requireBin, startWorker } from './worker-bin.js';

// A task that measures the heap of the worker process running it: 20 MB that stays live, a
// full collection (which sets V8's next limit from what is live), then garbage that lives
// long enough to reach the old generation. The heap's peak over the live data is the room
// V8 let the garbage take before it collected again.
const HANDLERS = `
import v8 from 'node:v8';
import vm from 'node:vm';
export function heap() {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const live = [];
  for (let i = 0; i < 250000; i++) live.push('live-' + i + '-padding-padding');
  gc();
  const base = process.memoryUsage().heapUsed;
  const recent = [];
  let peak = base;
  for (let round = 0; round < 400; round++) {
    const batch = new Array(5000);
    for (let i = 0; i < 5000; i++) batch[i] = 'g' + i + '-' + round + '-padding-padding';
    recent.push(batch);
    if (recent.length > 20) recent.shift();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  return { liveMb: base / 2 ** 20, roomMb: (peak - base) / 2 ** 20, kept: live.length };
}
`;

interface Measured {
  liveMb: number;
  roomMb: number;
}

describe('zoott-worker --heap-room', { timeout: 180_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let dir: string;

  beforeAll(async () => {
    requireBin();
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    dir = mkdtempSync(join(tmpdir(), 'zoott-heap-room-'));
    writeFileSync(join(dir, 'handlers.mjs'), HANDLERS);
  });

  afterAll(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One worker process with these extra arguments runs one `heap` task; its measurement. */
  async function measure(world: string, extra: string[]): Promise<Measured> {
    const worker = startWorker(
      [
        ...['--connect', ns, '--world', world, '--create-world'],
        ...['--handlers', join(dir, 'handlers.mjs'), ...extra],
      ],
      // A small young generation, so the task's garbage reaches the old generation, where
      // the heap room applies, within a few hundred batches.
      { env: { NODE_OPTIONS: '--max-semi-space-size=1' } },
    );
    try {
      const engine = createEngine(client, { world });
      await engine.init().catch(() => undefined);
      const [queued] = await engine.queue({ name: 'measure', type: 'heap' });
      const rec = await settled(client, world, queued!.key, 120_000);
      if (rec.state !== 'completed') throw new Error(`heap task ${rec.state}: ${worker.output()}`);
      return rec.result as Measured;
    } finally {
      await killWorkers([worker]);
    }
  }

  it('bounds the garbage the worker heap gathers over its live data', async () => {
    const tight = await measure('room10', ['--heap-room', '10']);
    const loose = await measure('room400', ['--heap-room', '400']);
    // The same work in both: about 20 MB live.
    expect(tight.liveMb).toBeGreaterThan(15);
    expect(loose.liveMb).toBeGreaterThan(15);
    // V8 keeps at least its minimum step (a few MB) and a young generation of room; with 10%
    // the garbage stays near that, with 400% it takes several times as much.
    expect(loose.roomMb).toBeGreaterThan(2 * tight.roomMb);
    expect(tight.roomMb).toBeLessThan(tight.liveMb);
  });
});
