import { type Claim, type Coordinator, createEngine, type Engine } from '@zoott/core';
import { MemoryServer } from '@zoott/memory-adapter';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../engine/helpers.js';

type Action =
  | { kind: 'claim'; worker: number }
  | { kind: 'claimAll' }
  | { kind: 'complete'; worker: number }
  | { kind: 'fail'; worker: number }
  | { kind: 'crash'; worker: number };

interface Sim {
  c: Coordinator;
  engine: Engine;
  held: Claim[];
}

const action = (workers: number): fc.Arbitrary<Action> => {
  const w = fc.integer({ min: 0, max: workers - 1 });
  return fc.oneof(
    { weight: 4, arbitrary: w.map((worker) => ({ kind: 'claim' as const, worker })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'claimAll' as const }) },
    { weight: 4, arbitrary: w.map((worker) => ({ kind: 'complete' as const, worker })) },
    { weight: 1, arbitrary: w.map((worker) => ({ kind: 'fail' as const, worker })) },
    { weight: 1, arbitrary: w.map((worker) => ({ kind: 'crash' as const, worker })) },
  );
};

/** A forest: each task is [name, parent index or -1]; parents always come first. */
const forest = fc
  .array(fc.integer({ min: -1, max: 30 }), { minLength: 1, maxLength: 14 })
  .map((parents) => parents.map((p, i) => (p >= 0 && p < i ? p : -1)));

describe('engine: N workers with random crashes (property, memory adapter)', () => {
  it('never completes a task twice, never loses one, never runs a child early', async () => {
    await fc.assert(
      fc.asyncProperty(
        forest,
        fc.integer({ min: 2, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(action(4), { minLength: 5, maxLength: 60 }),
        async (parents, workerCount, buckets, actions) => {
          const server = new MemoryServer();
          const log = memoryLogger();
          const producer = await server.connect();
          const world = 'prop';
          const admin = createEngine(producer, { world, buckets, logger: log });
          await admin.init();
          const keys: string[][] = [];
          for (const [i, p] of parents.entries()) {
            const key = p < 0 ? [`t${i}`] : [...keys[p]!, `t${i}`];
            keys.push(key);
            await admin.queue(
              { name: `t${i}`, type: 'job' },
              p < 0 ? null : { key: keys[p]! },
              null,
              {
                maxAttempts: 3,
                backoff: { baseMs: 0, maxMs: 0 },
              },
            );
          }
          const sims: Sim[] = [];
          for (let i = 0; i < workerCount; i++) {
            const c = await server.connect();
            sims.push({ c, engine: createEngine(c, { world, logger: log }), held: [] });
          }
          const completions = new Map<string, number>();
          const done = new Set<string>();
          const checkClaim = (claim: Claim) => {
            for (let d = 1; d < claim.key.length; d++) {
              const ancestor = claim.key.slice(0, d).join('|');
              expect(done.has(ancestor), `${claim.key.join('|')} ran before ${ancestor}`).toBe(
                true,
              );
            }
          };
          const settle = async (sim: Sim, how: 'complete' | 'fail') => {
            const claim = sim.held.shift();
            if (!claim) return;
            if (how === 'fail') {
              await sim.engine.fail(claim, new Error('random failure'));
              return;
            }
            const out = await sim.engine.complete(claim, claim.key.join('|'));
            if (out.status === 'completed') {
              const k = claim.key.join('|');
              completions.set(k, (completions.get(k) ?? 0) + 1);
              done.add(k);
            }
          };
          const claimFor = async (sim: Sim) => {
            if (sim.c.state !== 'connected') return;
            const claim = await sim.engine.claim();
            if (claim) {
              checkClaim(claim);
              sim.held.push(claim);
            }
          };
          for (const a of actions) {
            const sim = a.kind === 'claimAll' ? undefined : sims[a.worker % workerCount]!;
            switch (a.kind) {
              case 'claim':
                await claimFor(sim!);
                break;
              case 'claimAll':
                await Promise.all(sims.map(claimFor));
                break;
              case 'complete':
              case 'fail':
                await settle(sim!, a.kind);
                break;
              case 'crash':
                server.expireSession(sim!.c.sessionId!);
                // A crashed worker still tries to finish what it held: fencing must refuse it.
                while (sim!.held.length > 0) await settle(sim!, 'complete');
                await sim!.c.renewSession();
                break;
            }
          }
          // Finish: whatever workers still hold completes, then one worker drains the rest,
          // retrying dead-lettered tasks, so every task must end completed exactly once.
          for (const sim of sims) while (sim.held.length > 0) await settle(sim, 'complete');
          const drainer = sims[0]!;
          for (let guard = 0; guard < 500; guard++) {
            const claim = await drainer.engine.claim();
            if (claim) {
              checkClaim(claim);
              drainer.held.push(claim);
              await settle(drainer, 'complete');
              continue;
            }
            const failed = await admin.list('failed');
            if (failed.length === 0) break;
            for (const f of failed) await admin.retry(f.key);
          }
          for (const key of keys) expect(completions.get(key.join('|')), key.join('|')).toBe(1);
          expect(await admin.counts()).toEqual({
            pending: 0,
            working: 0,
            completed: keys.length,
            failed: 0,
          });
          await Promise.all([producer, ...sims.map((s) => s.c)].map((c) => c.close()));
        },
      ),
      { numRuns: 60 },
    );
  });
});
