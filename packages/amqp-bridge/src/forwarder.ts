import { type Acl, type Coordinator, isZoottError } from '@zoott/core';
import { decodeJson, ensureWorldPath, permsToShort, worldRoot } from '@zoott/core/internal';
import { replyDir } from '@zoott/jobs';
import type { AmqpLink } from './amqp-link.js';
import { BRIDGE_EXCHANGE } from './constants.js';
import type { BridgeLogger } from './logger.js';
import { amqpResult } from './result.js';

/** Longest wait between two scans when no watch fires (a safety net, not the mechanism). */
const RESCAN_MS = 30_000;

/** What the forwarder needs. */
export interface ForwarderOptions {
  coordinator: () => Coordinator;
  world: string;
  link: AmqpLink;
  logger: BridgeLogger;
  /** Test hook: runs after a result is claimed and read, before it is published. */
  beforePublish?: (path: string) => Promise<void>;
  /** Test hook: runs after the broker confirmed a result and before it is removed. */
  afterPublished?: (path: string) => Promise<void>;
  stopped: () => boolean;
}

/** Where the world's results for the bridge land, and where bridges claim them. */
export function forwarderPaths(world: string): { dir: string; claims: string } {
  const dir = replyDir({ exchange: BRIDGE_EXCHANGE, routingkey: world }, world);
  return { dir, claims: `${dir}~claims` };
}

const aclText = (acl: readonly Acl[]) =>
  acl
    .map((a) => `${a.scheme}:${a.id}:${permsToShort(a.perms)}`)
    .sort()
    .join(', ');

/** Sequence number at the end of a sequential node's name. */
const sequenceOf = (name: string) => Number(/(\d{10})$/.exec(name)?.[1] ?? Infinity);

/**
 * Forwards the world's results to RabbitMQ. Workers publish each result of a bridged job
 * into one reply directory in ZooKeeper, atomically with its completion. A bridge takes a
 * result by creating an ephemeral claim node (so of several bridges one publishes it; a
 * bridge that dies drops its claims with its session), publishes it with publisher
 * confirms, and only after the broker's confirm deletes the result and its claim in one
 * multi. A bridge killed between the confirm and the delete leaves the result to be
 * published again: at least once, never zero times. Each message carries the result
 * node's path as its `message-id`, the same on a re-publication, for consumers that
 * deduplicate.
 */
export class Forwarder {
  private wake: () => void = () => {};

  constructor(private readonly options: ForwarderOptions) {}

  /** Wakes the loop (a session came back, the link reconnected). */
  poke(): void {
    this.wake();
  }

  async run(): Promise<void> {
    const log = this.options.logger;
    while (!this.options.stopped()) {
      const changed = new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      try {
        await this.options.link.ready();
        if (this.options.stopped()) return;
        await this.scan(() => this.wake());
      } catch (err) {
        log.warn({ err: String(err) }, 'forwarding results paused; retrying');
      }
      await Promise.race([changed, new Promise((r) => setTimeout(r, RESCAN_MS).unref())]);
    }
  }

  /** One pass over the reply directory, oldest result first. */
  private async scan(watch: () => void): Promise<void> {
    const c = this.options.coordinator();
    const { dir, claims } = forwarderPaths(this.options.world);
    const acl = (await c.getAcl(worldRoot(this.options.world))).acl;
    await ensure(c, claims, acl);
    let names: string[];
    try {
      names = await c.children(dir, { watch });
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
      if ((await c.exists(dir, { watch })) === null) return;
      names = await c.children(dir, { watch });
    }
    // Results are trusted only under the world's ACL: nobody else can have planted them.
    const dirAcl = (await c.getAcl(dir)).acl;
    if (aclText(dirAcl) !== aclText(acl))
      throw new Error(`${dir} is not under the world's ACL; nothing there is forwarded`);
    for (const name of names.sort((a, b) => sequenceOf(a) - sequenceOf(b))) {
      if (this.options.stopped()) return;
      await this.forwardOne(c, `${dir}/${name}`, `${claims}/${name}`, acl, watch);
    }
  }

  private async forwardOne(
    c: Coordinator,
    path: string,
    claim: string,
    acl: readonly Acl[],
    watch: () => void,
  ): Promise<void> {
    const log = this.options.logger;
    try {
      await c.create(claim, undefined, { ephemeral: true, acl });
    } catch (err) {
      if (!isZoottError(err, 'NODE_EXISTS')) throw err;
      // Another bridge has it; if that bridge dies its claim goes and we look again.
      await c.exists(claim, { watch });
      log.debug({ path }, 'result claimed by another bridge');
      return;
    }
    let got: Awaited<ReturnType<Coordinator['get']>>;
    try {
      got = await c.get(path);
    } catch (err) {
      await c.delete(claim).catch(() => {});
      if (isZoottError(err, 'NO_NODE')) return; // forwarded by another bridge meanwhile
      throw err;
    }
    const nodeAcl = (await c.getAcl(path)).acl;
    const out =
      aclText(nodeAcl) === aclText(acl) ? amqpResult(decodeJson<unknown>(got.data, path)) : null;
    if (out === null) {
      log.error({ path }, 'not a result of the bridge (or not under the world ACL); removed');
      await c.multi([
        { op: 'delete', path, version: got.stat.version },
        { op: 'delete', path: claim },
      ]);
      return;
    }
    const exchange = out.address.exchange ?? '';
    await this.options.beforePublish?.(path);
    try {
      await this.options.link.publish(
        exchange,
        out.address.routingkey,
        Buffer.from(JSON.stringify(out.body)),
        { persistent: true, contentType: 'application/json', messageId: path },
      );
    } catch (err) {
      await c.delete(claim).catch(() => {});
      if (/NOT_FOUND/.test(String(err))) {
        // The producer named an exchange that does not exist: no retry can deliver it. The
        // result stays in the task's completed record; the reply node goes.
        log.error(
          { path, exchange, routingkey: out.address.routingkey, err: String(err) },
          'result not published: the exchange does not exist (the completed record keeps it)',
        );
        await c.delete(path, got.stat.version).catch(() => {});
        return;
      }
      throw err;
    }
    await this.options.afterPublished?.(path);
    await c.multi([
      { op: 'delete', path, version: got.stat.version },
      { op: 'delete', path: claim },
    ]);
    log.info({ path, exchange, routingkey: out.address.routingkey }, 'result published to AMQP');
  }
}

/**
 * Creates `path` (in the world's reply area) and what is missing above it with `acl`, up to
 * the world's node in the area, which is made as `init` makes it: nothing shared is created
 * with the world's ACL.
 */
async function ensure(c: Coordinator, path: string, acl: readonly Acl[]): Promise<void> {
  if ((await c.exists(path)) !== null) return;
  await ensureWorldPath(c, path, acl);
}
