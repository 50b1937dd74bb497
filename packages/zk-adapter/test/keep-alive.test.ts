import type { SessionEvent } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { bytes, freshNamespace, open } from './helpers.js';

/**
 * The keep-alive on a real ZooKeeper. The server expires a session one timeout after it last
 * received anything from the client; what the client receives does not count. A session that
 * only listens (a worker with nothing to do, holding watches over a busy world) must still
 * ping on time. In its own file: it runs for a minute, beside the other files.
 */
describe('keep-alive', () => {
  it('a session that only receives a notification every 500 ms for 60 s keeps its session', {
    timeout: 120_000,
  }, async () => {
    const ns = await freshNamespace();
    // Short: the server hears nothing from this client but its pings. A third of it (the ping
    // interval) is longer than the gap between two notifications, so a keep-alive that waits
    // for a quiet socket never pings.
    const listener = await open(ns, { sessionTimeoutMs: 2000 });
    const writer = await open(ns);
    await writer.create('/busy', bytes('0'));
    await listener.create('/alive', undefined, { ephemeral: true });
    const id = listener.sessionId;
    const sessionEvents: SessionEvent[] = [];
    // A lost session ends the minute at once. (A connection dropped and won back within the
    // session, on a machine too busy to answer in time, keeps the session: not the point.)
    let broken: (e: SessionEvent) => void = () => {};
    const brokenAt = new Promise<SessionEvent>((resolve) => {
      broken = resolve;
    });
    listener.onSession((e) => {
      sessionEvents.push(e);
      if (e.type === 'lost') broken(e);
    });
    let notified = 0;
    let resets = 0;
    let ended: () => void = () => {};
    const endSeen = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const stop = await listener.watchTree('/busy', (e) => {
      if (e.type === 'dataChanged') notified++;
      else if (e.type === 'reset') resets++;
      else if (e.type === 'created' && e.path === '/busy/end') ended();
    });

    const RUN_MS = 60_000;
    const EVERY_MS = 500;
    const start = Date.now();
    let writes = 0;
    // The writer is the clock of this test: one change per 500 ms, each one a notification.
    const writing = (async () => {
      while (Date.now() - start < RUN_MS && !sessionEvents.some((e) => e.type === 'lost')) {
        await writer.set('/busy', bytes(String(++writes)));
        const next = start + writes * EVERY_MS;
        await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
      }
    })();
    const first = await Promise.race([writing.then(() => null), brokenAt]);
    expect(first, 'the session lost during the minute of notifications').toBeNull();
    expect(sessionEvents.filter((e) => e.type === 'lost' || e.type === 'connected')).toEqual([]);
    // The last change's write is answered to the writer; its notification to the listener, a
    // session of its own, may still be on its way. A node created after it is reported after
    // it (a tree watch keeps the server's order): once that arrives, every change has.
    await writer.create('/busy/end', bytes('end'));
    let noEnd: NodeJS.Timeout | undefined;
    await Promise.race([
      endSeen,
      new Promise((_, reject) => {
        noEnd = setTimeout(
          () => reject(new Error(`${notified} of ${writes} notifications, no end`)),
          10_000,
        );
      }),
    ]).finally(() => clearTimeout(noEnd));
    stop();

    expect(writes).toBeGreaterThanOrEqual(RUN_MS / EVERY_MS - 1);
    // Every change reached the listener: it was listening the whole time. A connection
    // dropped and won back within the session (a machine too busy to answer in time) gives
    // `reset` instead of the changes made while it was down: then the count only bounds.
    if (resets === 0) expect(notified).toBe(writes);
    else
      expect(notified, `${resets} resets: ${JSON.stringify(sessionEvents)}`).toBeLessThanOrEqual(
        writes,
      );
    expect(listener.state).toBe('connected');
    expect(listener.sessionId).toBe(id);
    // The server agrees: the session's ephemeral node is still there, owned by it.
    expect((await writer.exists('/alive'))?.ephemeralOwner).toBe(id);
  });
});
