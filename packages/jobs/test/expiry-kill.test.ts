// When a worker kills its jobs for ZooKeeper's silence: past the limit computed from the last
// reply and the negotiated timeout, never for a silence that ends within it (a blip), and for
// a coordinator without a reply clock (the memory adapter) counted from its suspension.
// Deterministic: fake timers, and a clock they drive.
import type { Coordinator, SessionListener, SessionState } from '@zoott/core';
import { MemoryServer } from '@zoott/memory-adapter';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ExpiryKill, monotonicNow, unheardDeadline, unheardLimitMs } from '../src/expiry-kill.js';
import { monotonicMs } from '../src/jobs/index.js';

/** The parts of a ZooKeeper coordinator ExpiryKill reads: state, timeout, events, last reply. */
class HeardCoordinator {
  state: SessionState = 'connected';
  lastReplyAt: number | null;
  private readonly listeners = new Set<SessionListener>();
  constructor(
    public sessionTimeoutMs: number,
    now: number,
  ) {
    this.lastReplyAt = now;
  }
  onSession(l: SessionListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  emit(type: 'suspended' | 'reconnected' | 'lost', state: SessionState): void {
    this.state = state;
    for (const l of this.listeners) l({ type, sessionId: null });
  }
}

describe('ExpiryKill', () => {
  let kills: Array<{ silentMs: number; first: boolean }>;
  let watch: ExpiryKill | undefined;
  const now = () => Date.now();
  const watchOn = (c: Coordinator | HeardCoordinator) => {
    watch = new ExpiryKill(c as Coordinator, {
      now,
      kill: (silentMs, first) => kills.push({ silentMs, first }),
    });
  };

  beforeEach(() => {
    vi.useFakeTimers();
    kills = [];
  });
  afterEach(() => {
    watch?.close();
    watch = undefined;
    vi.useRealTimers();
  });

  it('the limit leaves the keep-alive third and a tenth of the timeout before the server may expire', () => {
    expect(unheardLimitMs(4000)).toBe(2266);
    // The server expires the session no earlier than 2/3 of the timeout after the last reply.
    for (const t of [4000, 10_000, 30_000])
      expect((2 * t) / 3 - unheardLimitMs(t)).toBeGreaterThanOrEqual(t / 10);
  });

  it('kills once the server has been silent for the limit of the negotiated timeout', () => {
    const c = new HeardCoordinator(4000, now());
    watchOn(c);
    vi.advanceTimersByTime(1000);
    c.lastReplyAt = now(); // a ping's answer
    vi.advanceTimersByTime(2265);
    expect(kills).toEqual([]);
    // Silent from here on: the connection drops only later (read timeout at 2/3).
    vi.advanceTimersByTime(1);
    expect(kills).toEqual([{ silentMs: 2266, first: true }]);
    // While the silence lasts, again (a job that started late), but only one first.
    vi.advanceTimersByTime(250);
    expect(kills.length).toBeGreaterThan(1);
    expect(kills.filter((k) => k.first)).toHaveLength(1);
  });

  it('a renewed session counts with its own negotiated timeout', () => {
    const c = new HeardCoordinator(4000, now());
    watchOn(c);
    c.sessionTimeoutMs = 10_000;
    vi.advanceTimersByTime(unheardLimitMs(4000) + 10);
    expect(kills).toEqual([]);
    vi.advanceTimersByTime(unheardLimitMs(10_000) - unheardLimitMs(4000));
    expect(kills.map((k) => k.first)).toEqual([true]);
  });

  it('a blip: the connection back, and the server heard, within the limit kills nothing', () => {
    const c = new HeardCoordinator(4000, now());
    watchOn(c);
    for (let i = 0; i < 5; i++) {
      vi.advanceTimersByTime(1500);
      c.emit('suspended', 'suspended');
      vi.advanceTimersByTime(700);
      c.lastReplyAt = now();
      c.emit('reconnected', 'connected');
    }
    vi.advanceTimersByTime(2000);
    expect(kills).toEqual([]);
  });

  it('nothing while the session is lost or renewing (the loss kills at once), again once back', () => {
    const c = new HeardCoordinator(4000, now());
    watchOn(c);
    c.emit('lost', 'lost');
    vi.advanceTimersByTime(20_000);
    expect(kills).toEqual([]);
    c.lastReplyAt = now();
    c.state = 'connected';
    c.emit('reconnected', 'connected');
    vi.advanceTimersByTime(unheardLimitMs(4000));
    expect(kills.map((k) => k.first)).toEqual([true]);
  });

  it('memory adapter: counted from the suspension, when its server starts the expiry timer', async () => {
    const server = new MemoryServer();
    const c = await server.connect({ sessionTimeoutMs: 4000 });
    try {
      watchOn(c);
      vi.advanceTimersByTime(60_000);
      expect(kills).toEqual([]); // connected: its server hears it all the time
      c.disconnect();
      vi.advanceTimersByTime(unheardLimitMs(4000) - 1);
      c.reconnect();
      vi.advanceTimersByTime(60_000);
      expect(kills).toEqual([]);
      c.disconnect();
      vi.advanceTimersByTime(unheardLimitMs(4000));
      expect(kills.map((k) => k.first)).toEqual([true]);
    } finally {
      await c.close();
    }
  });
});

describe('unheardDeadline (what the job keeper kills at)', () => {
  it('is the last reply plus the limit, on CLOCK_MONOTONIC, and moves with the replies', () => {
    const heard = monotonicNow() - 1000;
    const c = new HeardCoordinator(4000, heard);
    const deadline = unheardDeadline(c as unknown as Coordinator);
    const d = deadline()!;
    // The reply, 1000 ms ago on this process's clock, is 1000 ms ago on the keeper's.
    expect(Math.abs(monotonicMs() - d.heardAt - 1000)).toBeLessThan(20);
    // Both ends are large monotonic readings, so the difference carries float error: ±0.05 ms.
    expect(d.at - d.heardAt).toBeCloseTo(unheardLimitMs(4000), 1);
    c.lastReplyAt = heard + 500;
    expect(deadline()!.at - d.at).toBeCloseTo(500, 0);
    // A renewed session's timeout is read each time.
    c.sessionTimeoutMs = 10_000;
    expect(deadline()!.at - deadline()!.heardAt).toBeCloseTo(unheardLimitMs(10_000), 1);
  });

  it('is none while the session is not open, or without a reply clock', async () => {
    const c = new HeardCoordinator(4000, monotonicNow());
    c.state = 'suspended';
    expect(unheardDeadline(c as unknown as Coordinator)()).not.toBeNull();
    for (const state of ['lost', 'closed', 'connecting'] as const) {
      c.state = state;
      expect(unheardDeadline(c as unknown as Coordinator)()).toBeNull();
    }
    const memory = await new MemoryServer().connect();
    expect(unheardDeadline(memory)()).toBeNull();
    await memory.close();
  });
});
