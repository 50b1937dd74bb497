// One process of the idle-fleet test: several worker loops, each on a ZooKeeper session of its
// own, serving one world with a no-op handler. Driven over IPC by idle-fleet.test.ts; uses the
// built packages. Argv: connect string, world, loops, session timeout (ms).
import { runWorker } from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';

const [connectString, world, loopsArg, timeoutArg] = process.argv.slice(2);
const loops = Number(loopsArg);
const sessionTimeoutMs = Number(timeoutArg);
const quiet = { warn: () => {}, info: () => {}, debug: () => {}, error: () => {} };
const send = (message) => process.send?.(message);

const members = [];
for (let i = 0; i < loops; i++) {
  const zk = await connectZk(connectString, { sessionTimeoutMs });
  const firstSession = zk.sessionId;
  // Every session event of a loop is news to the test: an idle worker should have none.
  zk.onSession((e) => send({ type: 'session', loop: i, event: e.type, firstSession }));
  const handle = runWorker(zk, { tick: () => 'ok' }, { world, logger: quiet, concurrency: 4 });
  handle.on('error', ({ message }) => send({ type: 'error', loop: i, message }));
  const member = { zk, handle, firstSession, doneAt: [] };
  handle.on('completed', () => member.doneAt.push(Date.now()));
  members.push(member);
}

const registered = async () => {
  while (members.some((m) => m.handle.registryPath === null)) {
    await new Promise((r) => setTimeout(r, 20));
  }
};
await registered();
const readyAt = Date.now();
send({ type: 'ready', sessions: members.map((m) => m.firstSession) });

/** A loop's longest stretch without finishing a task, from `ready` to `until`. */
function longestIdle(doneAt, until) {
  let longest = 0;
  let from = readyAt;
  for (const at of [...doneAt, until]) {
    longest = Math.max(longest, at - from);
    from = at;
  }
  return longest;
}

process.on('message', async (message) => {
  if (message?.type !== 'stop') return;
  const stopAt = Date.now();
  const report = members.map((m) => ({
    first: m.firstSession,
    now: m.zk.sessionId,
    state: m.zk.state,
    completed: m.handle.stats.completed,
    longestIdleMs: longestIdle(m.doneAt, stopAt),
  }));
  await Promise.all(members.map((m) => m.handle.stop()));
  await Promise.all(members.map((m) => m.zk.close()));
  send({ type: 'stopped', report });
  process.disconnect();
});
