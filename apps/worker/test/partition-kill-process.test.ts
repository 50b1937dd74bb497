/**
 * A worker cut off from ZooKeeper by a real partition (its network namespace's link down:
 * nothing passes either way, no reset) ends its job before the server can expire its session,
 * though the worker itself learns of the loss only seconds later: a second worker, on the
 * server's side, runs the job again once the session has expired, and the job's own start,
 * tick and end marks show the first copy had ended before the second started. A short cut
 * kills nothing. A worker whose event loop stops after the cut (SIGSTOP: no kill of its own,
 * no heartbeat) still has its job killed at the deadline, by the job keeper on its own clock.
 * The built daemon, a real ZooKeeper on a host of its own; needs root.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Coordinator } from '@zoott/core';
import type { RegularJobResult } from '@zoott/core/jobs';
import { submitJob, unheardLimitMs } from '@zoott/jobs/internal';
import { killMarked, settled } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import {
  createNetwork,
  type NamespaceNetwork,
  type NetHost,
  startZooKeeper,
  type ZooKeeperServer,
} from '@zoott/zk-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectNoOverlap, firstRunTicking, MARKING_JOB, runsOf } from './job-marks.js';
import {
  jobWorkerArgs,
  killWorkers,
  registered,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

const SESSION_MS = 4000;
// The worker's own kill, or the keeper's at the same deadline, whichever came first.
const KILL_LOG =
  /ZooKeeper silent too long: (jobs killed before the session could expire|the job keeper killed a job at its deadline)/;

describe('a worker cut off from ZooKeeper ends its jobs before its session can expire', {
  timeout: 180_000,
}, () => {
  let net: NamespaceNetwork;
  let cutOff: NetHost;
  let server: ZooKeeperServer;
  let client: Coordinator;
  let dir: string;
  const workers: WorkerProcess[] = [];
  // A number: `sleep` takes it as one more (tiny) duration, so every process carries it.
  const marker = `0.000${process.pid}${Date.now() % 100_000}`;

  beforeAll(async () => {
    requireBin();
    if (process.getuid?.() !== 0) throw new Error('these tests need root (network namespaces)');
    net = await createNetwork();
    const zkHost = await net.addHost('zk');
    cutOff = await net.addHost('w');
    server = await startZooKeeper({ host: zkHost });
    client = await connectZk(server.connectString);
    dir = mkdtempSync(join(tmpdir(), 'zoott-partition-'));
  }, 120_000);
  afterEach(async () => {
    await cutOff.setCut(false);
    await killWorkers(workers.splice(0));
    killMarked(marker);
  });
  afterAll(async () => {
    await client?.close();
    await server?.stop({ signal: 'SIGKILL' });
    await net?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function start(world: string, id: string, sessionMs: number, host?: NetHost): WorkerProcess {
    const w = startWorker(
      [
        ...jobWorkerArgs(server.connectString, world, id),
        ...['--session-timeout', String(sessionMs), '--create-world', '--kill-grace', '60000'],
      ],
      host ? { launcher: host.exec } : {},
    );
    workers.push(w);
    return w;
  }

  /** A marking job (job-marks.ts) that ignores SIGTERM, its setsid descendant too. */
  function stubbornJob(marks: string, ticks: number) {
    return {
      executable: '/bin/sh',
      arguments: ['-c', `trap '' TERM\n${MARKING_JOB}`, marks, marker, String(ticks)],
    };
  }

  it('the first copy ends before the second starts', async () => {
    const world = 'cut';
    const marks = join(dir, `${world}.marks`);
    const a = start(world, 'A', SESSION_MS, cutOff);
    await registered(client, world, 1);
    const { key } = await submitJob(client, stubbornJob(marks, 100), { world });
    await firstRunTicking(marks, marker);
    await cutOff.setCut(true);
    const cutAt = BigInt(Date.now()) * 1_000_000n;
    // On the server's side: it may claim the job once the server has expired A's session.
    start(world, 'B', SESSION_MS);
    const rec = await settled(client, world, key, 120_000);
    expect(rec.state, a.output()).toBe('completed');
    const runs = runsOf(marks);
    expect(runs, a.output()).toHaveLength(2);
    expectNoOverlap(runs);
    // A's copy was killed (no end mark), within the session timeout of the cut: the client
    // would call the session lost only 2/3 of a timeout and a whole timeout after its last reply.
    expect(runs[0]!.ended).toBe(false);
    expect(Number(runs[0]!.last - cutAt) / 1e6).toBeLessThan(SESSION_MS);
    expect(runs[1]!.ended).toBe(true);
    expect((rec.result as RegularJobResult).pid).toBe(runs[1]!.pid);
    expect(a.output()).toMatch(KILL_LOG);
  });

  it('a worker stopped after the cut: the keeper kills at the deadline', async () => {
    // 12 s: a ping every 4 s, so the last reply R came at most 4 s before the cut, and the
    // deadline R + 6.8 s is at most 6.8 s after it. The worker is stopped 2 s after the cut,
    // before its own kill could run (not before R + 6.8 s >= cut + 2.8 s). The keeper's other
    // guard, silence, would kill only half a timeout after the last heartbeat: 7.75 s or more
    // after the cut, past the deadline, and past the server's earliest expiry (R + 8 s).
    const sessionMs = 12_000;
    const world = 'stopped';
    const marks = join(dir, `${world}.marks`);
    const a = start(world, 'A', sessionMs, cutOff);
    await registered(client, world, 1);
    const { key } = await submitJob(client, stubbornJob(marks, 100), { world });
    await firstRunTicking(marks, marker);
    await cutOff.setCut(true);
    const cutAt = BigInt(Date.now()) * 1_000_000n;
    await new Promise((r) => setTimeout(r, 2000));
    a.child.kill('SIGSTOP');
    start(world, 'B', sessionMs);
    const rec = await settled(client, world, key, 120_000);
    expect(rec.state).toBe('completed');
    const runs = runsOf(marks);
    expect(runs).toHaveLength(2);
    expectNoOverlap(runs);
    expect(runs[0]!.ended).toBe(false);
    // Killed by the deadline (the slack: the keeper's timer and the kill on a loaded host).
    const lastAfterCut = Number(runs[0]!.last - cutAt) / 1e6;
    expect(lastAfterCut).toBeLessThan(unheardLimitMs(sessionMs) + 500);
    expect(runs[1]!.ended).toBe(true);
    expect(a.output()).not.toMatch(KILL_LOG);
  });

  it('a cut far shorter than the session kills nothing', async () => {
    const world = 'blip';
    const marks = join(dir, `${world}.marks`);
    // 10 s: a ping every 3.3 s, the kill after 5.7 s of silence; a 1 s cut, with TCP's
    // retransmissions after it, stays far below.
    const a = start(world, 'A', 10_000, cutOff);
    await registered(client, world, 1);
    const { key } = await submitJob(client, stubbornJob(marks, 40), { world });
    await firstRunTicking(marks, marker);
    await cutOff.setCut(true);
    await new Promise((r) => setTimeout(r, 1000));
    await cutOff.setCut(false);
    const rec = await settled(client, world, key, 120_000);
    expect(rec.state, a.output()).toBe('completed');
    const runs = runsOf(marks);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.ended).toBe(true);
    expect((rec.result as RegularJobResult).exit).toBe(0);
    expect(a.output()).not.toMatch(KILL_LOG);
  });
});
