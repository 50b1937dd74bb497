/**
 * `repairWorld` (doctor --repair) keeps what it moves byte for byte, whatever the bytes
 * (text or not, up to the largest node ZooKeeper holds), and one node it cannot move does
 * not stop it: each node's outcome is reported.
 */
import { createEngine, Perms } from '@zoott/core';
import { diagnoseWorld, readQuarantined, repairWorld } from '@zoott/core/internal';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { memoryLogger, worldName } from '../engine/helpers.js';

/** Bytes that are no UTF-8 text: every value, lone continuation bytes, a NUL, 0xff. */
function binary(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 131 + 7) % 256;
  out[0] = 0xff;
  out[1] = 0x80;
  out[2] = 0;
  return out;
}

describeOnBackends('engine: doctor --repair keeps every byte and goes on', (backend) => {
  it('non-UTF-8 bytes, a node too large for one copy, and a node it cannot move', async () => {
    const c = await backend().connect();
    const world = worldName('rp');
    const engine = createEngine(c, { world, buckets: 1, logger: memoryLogger() });
    await engine.init();
    const ctx = await engine.context();
    const bucket = ctx.layout.bucketPath('c', 0);
    // Corrupt completed records (no JSON, no task): each one the engine skips.
    const small = binary(300);
    const text = new TextEncoder().encode('\ufeffnot json, but text: é ✓');
    // Near the largest node ZooKeeper takes: its copy cannot ride in the move's one multi.
    const large = binary(1_000_000);
    await c.create(`${bucket}/a-large`, large);
    await c.create(`${bucket}/b-small`, small);
    await c.create(`${bucket}/c-text`, text);
    // One in a bucket that refuses deletes: its move fails, the others go on.
    const stuck = ctx.layout.bucketPath('f', 0);
    await c.create(`${stuck}/d-stuck`, small);
    await c.setAcl(stuck, [{ scheme: 'world', id: 'anyone', perms: Perms.ALL & ~Perms.DELETE }]);

    const findings = (await diagnoseWorld(ctx)).filter((f) => f.kind === 'corrupt');
    expect(findings.map((f) => f.path)).toEqual([
      `${bucket}/a-large`,
      `${bucket}/b-small`,
      `${bucket}/c-text`,
      `${stuck}/d-stuck`,
    ]);
    const progress: number[] = [];
    const out = await repairWorld(c, world, findings, { onProgress: (d) => progress.push(d) });
    expect(progress).toEqual([1, 2, 3, 4]);
    expect(out.moved.map((m) => m.from)).toEqual([
      `${bucket}/a-large`,
      `${bucket}/b-small`,
      `${bucket}/c-text`,
    ]);
    expect(out.notMoved).toEqual([
      {
        path: `${stuck}/d-stuck`,
        kind: 'corrupt',
        why: 'failed',
        error: expect.stringMatching(/^NO_AUTH/),
      },
    ]);
    for (const [from, bytes] of [
      [`${bucket}/a-large`, large],
      [`${bucket}/b-small`, small],
      [`${bucket}/c-text`, text],
    ] as const) {
      expect(await c.exists(from)).toBeNull();
      const to = out.moved.find((m) => m.from === from)!.to;
      const kept = await readQuarantined(c, to);
      expect(kept.record).toMatchObject({ from, kind: 'corrupt', bytes: bytes.length });
      expect(Buffer.from(kept.bytes).equals(Buffer.from(bytes))).toBe(true);
    }
    // Text stays readable as text in the record; other bytes are kept exactly.
    expect((await readQuarantined(c, out.moved[2]!.to)).record.data).toBe(
      '\ufeffnot json, but text: é ✓',
    );
    expect(await c.exists(`${stuck}/d-stuck`)).not.toBeNull();
  });

  it('a large copy whose move is refused (the node changed) leaves no parts behind', async () => {
    const c = await backend().connect();
    const world = worldName('rp');
    const engine = createEngine(c, { world, buckets: 1, logger: memoryLogger() });
    await engine.init();
    const ctx = await engine.context();
    const path = `${ctx.layout.bucketPath('c', 0)}/large`;
    await c.create(path, binary(900_000));
    const findings = await diagnoseWorld(ctx);
    // The node changes once its parts are written, just before the move's multi.
    let multis = 0;
    const changing = new Proxy(c, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop !== 'multi') return typeof v === 'function' ? v.bind(target) : v;
        return async (...args: Parameters<typeof c.multi>) => {
          if (++multis === 2) await target.set(path, binary(10));
          return target.multi(...args);
        };
      },
    });
    const out = await repairWorld(changing, world, findings);
    expect(out).toEqual({
      moved: [],
      notMoved: [{ path, kind: 'corrupt', why: 'changed while moving' }],
    });
    expect(multis).toBe(2);
    expect(await c.children(`/zoott_q/${world}`)).toEqual([]);
  });
});
