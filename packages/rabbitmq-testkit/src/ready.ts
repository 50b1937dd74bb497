import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import tls from 'node:tls';

/** AMQP 0-9-1 protocol header: what a client sends first. */
const PROTOCOL_HEADER = Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1]);
/** Frame type of a method frame: the broker answers the header with `connection.start`. */
const METHOD_FRAME = 1;

/** What {@link amqpAnswers} needs to speak TLS: the CA to check the broker against, a client certificate. */
export interface AmqpTlsProbe {
  ca: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/**
 * Whether an AMQP broker on `host:port` answers the protocol header with a method frame
 * (`connection.start`); over TLS when `tls` is given (the handshake, the broker's certificate
 * checked against `tls.ca`, must succeed first). RabbitMQ opens its listeners last, when the
 * node has booted, so an answer means the broker takes connections. Never throws: `false`
 * means not (yet).
 */
export function amqpAnswers(
  host: string,
  port: number,
  timeoutMs = 2000,
  probe?: AmqpTlsProbe,
): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = probe
      ? tls.connect({ host, port, ...probe, ...(net.isIP(host) ? {} : { servername: host }) })
      : net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once(probe ? 'secureConnect' : 'connect', () => socket.write(PROTOCOL_HEADER));
    socket.once('data', (chunk: Buffer) => done(chunk[0] === METHOD_FRAME));
    socket.once('close', () => done(false));
  });
}

/**
 * Polls {@link amqpAnswers} until it says yes, `failed()` returns a reason (the process
 * died), or the deadline passes; returns `null` when ready, else why not.
 */
export async function waitAmqp(
  host: string,
  port: number,
  timeoutMs: number,
  failed: () => string | null = () => null,
  probe?: AmqpTlsProbe,
): Promise<string | null> {
  return pollReady(
    () => amqpAnswers(host, port, 2000, probe),
    { timeoutMs, pauseMs: 100, failed },
    `no AMQP answer${probe ? ' over TLS' : ''} on ${host}:${port} within ${timeoutMs} ms`,
  );
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. zk-testkit has the same few lines; they
 * stay apart so that this private broker kit does not depend on the published ZooKeeper kit
 * (nor that kit's public API grow a port helper) for a dozen lines.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls until something accepts TCP connections on 127.0.0.1:`port`; `null` when it does. */
export async function waitTcp(
  port: number,
  timeoutMs: number,
  failed: () => string | null = () => null,
): Promise<string | null> {
  return pollReady(
    () => tcpAccepts(port),
    { timeoutMs, pauseMs: 50, failed },
    `nothing listens on port ${port} within ${timeoutMs} ms`,
  );
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port` now. */
function tcpAccepts(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Asks `answers` every `pauseMs` until it says yes (`null`), `failed()` returns a reason (which
 * is returned), or `timeoutMs` passes (`timedOut` is returned).
 */
async function pollReady(
  answers: () => Promise<boolean>,
  poll: { timeoutMs: number; pauseMs: number; failed: () => string | null },
  timedOut: string,
): Promise<string | null> {
  const deadline = Date.now() + poll.timeoutMs;
  while (Date.now() < deadline) {
    const why = poll.failed();
    if (why) return why;
    if (await answers()) return null;
    await sleep(poll.pauseMs);
  }
  return timedOut;
}
