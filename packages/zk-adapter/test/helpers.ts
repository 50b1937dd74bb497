import { randomUUID } from 'node:crypto';
import { afterEach, inject } from 'vitest';
import { connectZk, type ZkCoordinator, type ZkOptions } from '../src/index.js';
import { jute } from '../src/zk-wire/jute-speed.js';

/** Address of the run's shared ZooKeeper (zk-testkit global setup). */
export function zkServer(): string {
  return inject('zkConnect');
}

const opened: ZkCoordinator[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((c) => c.close()));
});

/** Connects and closes the client after the test. */
export async function open(connectString: string, options?: ZkOptions): Promise<ZkCoordinator> {
  const client = await connectZk(connectString, options);
  opened.push(client);
  return client;
}

/** A fresh chroot on the shared server, created; returns `host:port/chroot`. */
export async function freshNamespace(server = zkServer()): Promise<string> {
  const chroot = `/it-${randomUUID()}`;
  const admin = await open(server);
  await admin.create(chroot);
  return `${server}${chroot}`;
}

export const bytes = (s: string) => new TextEncoder().encode(s);
export const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Resolves with the first session event of `type`. */
export function nextSessionEvent(client: ZkCoordinator, type: string): Promise<void> {
  return new Promise((resolve) => {
    const off = client.onSession((e) => {
      if (e.type === type) {
        off();
        resolve();
      }
    });
  });
}

/** A jute record of the library, as the tests handle it. */
export type JuteRec = Record<string, unknown> & {
  setChrootPath(p: string | undefined): void;
  serialize(b: Buffer, o: number): number;
  deserialize(b: Buffer, o: number): number;
  byteLength(): number;
};
type JuteClass = new (...args: unknown[]) => JuteRec;

/** The library's own jute classes, typed for tests that build records as its client does. */
export const libJute = {
  protocol: jute.protocol as unknown as Record<string, JuteClass>,
  data: jute.data as unknown as Record<string, JuteClass>,
  ...(jute as unknown as {
    Request: new (h: unknown, p: unknown) => { toBuffer(): Buffer };
    TransactionRequest: new (ops: unknown[]) => JuteRec;
    TransactionResponse: new () => JuteRec & { results: unknown[] };
    OP_CODES: Record<string, number>;
  }),
};
