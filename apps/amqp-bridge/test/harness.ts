import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { expect } from 'vitest';

/** The programs as shipped: the built bins (`pnpm build` first). */
export const BRIDGE_BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
export const WORKER_BIN = fileURLToPath(new URL('../../worker/dist/bin.js', import.meta.url));

/** Jobs of the test worker run as the test's own user. */
export const SELF = userInfo().username;

export function assertBuilt(): void {
  for (const bin of [BRIDGE_BIN, WORKER_BIN])
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run pnpm build first`);
}

/** A started program, its JSON log lines, and a way to wait for one. */
export interface Program {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
  /** Resolves with the first log line (parsed) that `match` accepts, seen or to come. */
  logLine: (
    match: (line: Record<string, unknown>) => boolean,
    what: string,
  ) => Promise<Record<string, unknown>>;
}

/**
 * Preloaded into the bridge by the crash tests (`ZOOTT_AMQP_BRIDGE_TEST_PAUSE` in its env): it
 * stops the shipped binary at one point of its work, from the outside (see pause-at.mjs).
 */
const PAUSE_AT = fileURLToPath(new URL('./pause-at.mjs', import.meta.url));

/** Starts `node <bin> args` with `env` added to a clean environment. */
export function startProgram(bin: string, args: string[], env: Record<string, string>): Program {
  const preload = env.ZOOTT_AMQP_BRIDGE_TEST_PAUSE ? ['--import', PAUSE_AT] : [];
  const child = spawn(process.execPath, [...preload, bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', ...env },
  });
  let out = '';
  const lines: Record<string, unknown>[] = [];
  const waiters: Array<{
    match: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }> = [];
  let partial = '';
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
    partial += b.toString();
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      lines.push(line);
      for (const w of [...waiters])
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  });
  child.stderr!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const logLine = (match: (l: Record<string, unknown>) => boolean, what: string) => {
    const seen = lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      waiters.push({ match, resolve });
      void exited.then(({ code, signal }) =>
        reject(new Error(`exited (${code ?? signal}) before logging ${what}:\n${out}`)),
      );
    });
  };
  return { child, exited, output: () => out, logLine };
}

/** Stops a program for good (SIGKILL) and waits for it. */
export async function kill(p: Program): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await p.exited;
}

/**
 * Starts a bridge that must give up at start: it exits with `code` before it says it will
 * retry (which it must not) and before it is running. Resolves to what it wrote.
 */
export async function exitsAtStart(
  args: string[],
  env: Record<string, string>,
  code: number,
): Promise<string> {
  const p = startProgram(BRIDGE_BIN, args, env);
  try {
    // Exits, or says it will retry: whichever it does first.
    const retrying = p
      .logLine((l) => /retrying/.test(String(l.msg)), 'a retry')
      .then(
        () => 'retrying',
        () => 'exited',
      );
    const first = await Promise.race([p.exited.then(() => 'exited'), retrying]);
    expect(first, p.output()).toBe('exited');
    expect((await p.exited).code, p.output()).toBe(code);
  } finally {
    await kill(p);
  }
  expect(p.output()).not.toMatch(/bridge running/);
  return p.output();
}

/** A result consumer, as a Yothalot user has one: an exchange and a queue bound to it. */
export interface ResultInbox {
  queue: string;
  /** The next message (waits for it). */
  next: () => Promise<ConsumeMessage>;
  /** Messages received so far and not yet taken by `next`. */
  pending: () => number;
}

/** A queue bound to `exchange` with `routingKey` ('' exchange: the queue's own name). */
export async function resultInbox(
  ch: Channel,
  exchange: string,
  routingKey: string | null,
): Promise<ResultInbox> {
  const { queue } = await ch.assertQueue('', { exclusive: true });
  if (exchange !== '') await ch.bindQueue(queue, exchange, routingKey ?? queue);
  const got: ConsumeMessage[] = [];
  const waiting: Array<(m: ConsumeMessage) => void> = [];
  await ch.consume(
    queue,
    (m) => {
      if (!m) return;
      const w = waiting.shift();
      if (w) w(m);
      else got.push(m);
    },
    { noAck: true },
  );
  return {
    queue,
    next: () => {
      const m = got.shift();
      if (m) return Promise.resolve(m);
      return new Promise((resolve) => waiting.push(resolve));
    },
    pending: () => got.length,
  };
}

/** An AMQP client for the test: publishes jobs with confirms (over TLS with `tls` options). */
export async function producer(
  url: string,
  tls: { ca?: Buffer[]; cert?: Buffer; key?: Buffer } = {},
): Promise<{
  conn: ChannelModel;
  ch: Channel;
  post: (queue: string, body: string | object, props?: amqp.Options.Publish) => Promise<void>;
}> {
  const conn = await amqp.connect(url, tls);
  // A broker a test kills closes this connection under it: not an error of the test.
  conn.on('error', () => {});
  const ch = await conn.createChannel();
  const pub = await conn.createConfirmChannel();
  const post = async (queue: string, body: string | object, props: amqp.Options.Publish = {}) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    pub.sendToQueue(queue, Buffer.from(text), { persistent: true, ...props });
    await pub.waitForConfirms();
  };
  return { conn, ch, post };
}

/** Yothalot's time format. */
export const YOTHALOT_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** Polls until `probe` returns a value (a condition with a deadline, never a fixed sleep). */
export async function until<T>(probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A result message's JSON. */
export const bodyOf = (m: ConsumeMessage) =>
  JSON.parse(m.content.toString()) as Record<string, unknown>;

/** Ready and unacknowledged messages of a queue, as `rabbitmqctl list_queues` reads them. */
export async function queueCounts(
  rabbitmqctl: (args: string[]) => Promise<string>,
  queue: string,
): Promise<{ ready: number; unacked: number }> {
  const out = await rabbitmqctl([
    'list_queues',
    'name',
    'messages_ready',
    'messages_unacknowledged',
    '--formatter',
    'json',
    '-q',
  ]);
  const row = (JSON.parse(out) as Record<string, unknown>[]).find((r) => r.name === queue);
  if (!row) throw new Error(`no queue ${queue}`);
  return { ready: Number(row.messages_ready), unacked: Number(row.messages_unacknowledged) };
}
