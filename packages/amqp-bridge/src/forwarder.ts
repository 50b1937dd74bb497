import { type Acl, type Coordinator, isZoottError } from '@zoott/core';
import { decodeJson, ensureWorldPath, permsToShort, worldRoot } from '@zoott/core/internal';
import { parkOps, replyDir } from '@zoott/jobs';
import { type AmqpLink, PublishRefused } from './amqp-link.js';
import { BRIDGE_EXCHANGE } from './constants.js';
import type { BridgeLogger } from './logger.js';
import { addressProblem } from './message.js';
import { amqpResult, type OutgoingResult } from './result.js';

/** Longest wait between two scans when no watch fires (a safety net, not the mechanism). */
const RESCAN_MS = 30_000;
/** Results published at once (each waits for its own confirm). */
const CONCURRENCY = 8;
/** First and longest wait before a refused result is tried again. */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

/** What the forwarder needs. */
export interface ForwarderOptions {
  coordinator: () => Coordinator;
  world: string;
  link: AmqpLink;
  logger: BridgeLogger;
  /** Which exchanges results may go to (`--reply-exchanges`). */
  allowed: (exchange: string) => boolean;
  /** How long a refused result is retried before it is parked. */
  parkAfterMs: number;
  /** Test hook: runs after a result is claimed and read, before it is published. */
  beforePublish?: (path: string) => Promise<void>;
  /** Test hook: runs after the broker confirmed a result and before it is removed. */
  afterPublished?: (path: string) => Promise<void>;
  stopped: () => boolean;
}

/** Where the world's results for the bridge land, where bridges claim them, and its intake records. */
export function forwarderPaths(world: string): { dir: string; claims: string; intake: string } {
  const dir = replyDir({ exchange: BRIDGE_EXCHANGE, routingkey: world }, world);
  return { dir, claims: `${dir}~claims`, intake: `${dir}~intake` };
}

const aclText = (acl: readonly Acl[]) =>
  acl
    .map((a) => `${a.scheme}:${a.id}:${permsToShort(a.perms)}`)
    .sort()
    .join(', ');

/** Sequence number at the end of a sequential node's name. */
const sequenceOf = (name: string) => Number(/(\d{10})$/.exec(name)?.[1] ?? Infinity);

/** A result the broker refused, being retried: it holds its claim meanwhile. */
interface Failing {
  attempts: number;
  first: number;
  /** Not tried again before this time. */
  next: number;
}

/** One result, as read for publishing. */
interface Taken {
  path: string;
  claim: string;
  version: number;
  recorded: unknown;
  out: OutgoingResult;
}

/**
 * Forwards the world's results to RabbitMQ. Workers publish each result of a bridged job
 * into one reply directory in ZooKeeper, atomically with its completion. A bridge takes a
 * result by creating an ephemeral claim node (so of several bridges one publishes it; a
 * bridge that dies drops its claims with its session), publishes it (mandatory, with
 * publisher confirms), and only after the broker's confirm deletes the result and its claim
 * in one multi: at least once, never zero times. Each message carries the result node's
 * path as its `message-id`, the same on a re-publication, for consumers that deduplicate.
 *
 * A result the broker refuses (no such exchange, no right to publish there, no queue bound
 * to the routing key) is tried again on its own with backoff, holding its claim, while the
 * results behind it go on; after `parkAfterMs` it is parked (`/zoott_~parked/<world>`), where
 * `zoott parked` lists, retries and drops it. One no publication can carry (an exchange
 * outside `--reply-exchanges`, a name over 255 bytes) is parked at once.
 */
export class Forwarder {
  private wake: () => void = () => {};
  private readonly failing = new Map<string, Failing>();

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
      // The next retry of a refused result is a time to look again too.
      const nexts = [...this.failing.values()].map((f) => f.next);
      const wait = Math.max(0, Math.min(RESCAN_MS, ...nexts.map((n) => n - Date.now())));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        changed,
        new Promise((resolve) => {
          timer = setTimeout(resolve, wait);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    }
  }

  /** One pass over the reply directory, oldest result first, a few at once. */
  private async scan(watch: () => void): Promise<void> {
    const coordinator = this.options.coordinator();
    const { dir, claims } = forwarderPaths(this.options.world);
    const acl = (await coordinator.getAcl(worldRoot(this.options.world))).acl;
    await ensure(coordinator, claims, acl);
    let names: string[];
    try {
      names = await coordinator.children(dir, { watch });
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
      if ((await coordinator.exists(dir, { watch })) === null) return;
      names = await coordinator.children(dir, { watch });
    }
    // Results are trusted only under the world's ACL: nobody else can have planted them.
    const dirAcl = (await coordinator.getAcl(dir)).acl;
    if (aclText(dirAcl) !== aclText(acl))
      throw new Error(`${dir} is not under the world's ACL; nothing there is forwarded`);
    const present = new Set(names.map((n) => `${dir}/${n}`));
    for (const path of this.failing.keys()) if (!present.has(path)) this.failing.delete(path);
    const now = Date.now();
    const due = names
      .filter((n) => (this.failing.get(`${dir}/${n}`)?.next ?? 0) <= now)
      .sort((a, b) => sequenceOf(a) - sequenceOf(b));
    let next = 0;
    const lane = async () => {
      while (next < due.length && !this.options.stopped()) {
        const name = due[next++]!;
        await this.forwardOne(coordinator, `${dir}/${name}`, `${claims}/${name}`, acl, watch);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  }

  /** Claims and reads one result; `null` when it is not this bridge's to publish now. */
  private async take(
    coordinator: Coordinator,
    path: string,
    claim: string,
    acl: readonly Acl[],
    watch: () => void,
  ): Promise<Taken | null> {
    const log = this.options.logger;
    try {
      await coordinator.create(claim, undefined, { ephemeral: true, acl });
    } catch (err) {
      if (!isZoottError(err, 'NODE_EXISTS')) throw err;
      // Ours (a refused result held while it waits) or another bridge's: if that bridge
      // dies its claim goes and we look again.
      const held = await coordinator.exists(claim, { watch });
      if (held === null || held.ephemeralOwner !== coordinator.sessionId) {
        log.debug({ path }, 'result claimed by another bridge');
        return null;
      }
    }
    let got: Awaited<ReturnType<Coordinator['get']>>;
    try {
      got = await coordinator.get(path);
    } catch (err) {
      await coordinator.delete(claim).catch(() => {});
      if (isZoottError(err, 'NO_NODE')) return null; // forwarded by another bridge meanwhile
      throw err;
    }
    const nodeAcl = (await coordinator.getAcl(path)).acl;
    const recorded = decodeJson<unknown>(got.data, path);
    const out = aclText(nodeAcl) === aclText(acl) ? amqpResult(recorded) : null;
    if (out === null) {
      log.error({ path }, 'not a result of the bridge (or not under the world ACL); removed');
      await coordinator.multi([
        { op: 'delete', path, version: got.stat.version },
        { op: 'delete', path: claim },
      ]);
      return null;
    }
    return { path, claim, version: got.stat.version, recorded, out };
  }

  private async forwardOne(
    coordinator: Coordinator,
    path: string,
    claim: string,
    acl: readonly Acl[],
    watch: () => void,
  ): Promise<void> {
    const log = this.options.logger;
    const taken = await this.take(coordinator, path, claim, acl, watch);
    if (taken === null) return;
    const { out } = taken;
    const exchange = out.address.exchange ?? '';
    const routingkey = out.address.routingkey;
    const problem = addressProblem(out.address, this.options.allowed);
    if (problem !== null) return this.park(coordinator, taken, acl, problem, 0);
    await this.options.beforePublish?.(path);
    // A result refused before goes on a channel of its own: its refusal, if it comes again,
    // closes only that one, not the channel the other results' confirms are waiting on.
    const publish = this.failing.has(path)
      ? this.options.link.publishAlone.bind(this.options.link)
      : this.options.link.publish.bind(this.options.link);
    try {
      await publish(exchange, routingkey, Buffer.from(JSON.stringify(out.body)), {
        persistent: true,
        contentType: 'application/json',
        messageId: path,
        mandatory: true,
      });
    } catch (err) {
      if (err instanceof PublishRefused) return this.refused(coordinator, taken, acl, err);
      // Not this result's doing (the connection went): another bridge may do better.
      await coordinator.delete(claim).catch(() => {});
      throw err;
    }
    await this.options.afterPublished?.(path);
    await coordinator.multi([
      { op: 'delete', path, version: taken.version },
      { op: 'delete', path: claim },
    ]);
    this.failing.delete(path);
    log.info({ path, exchange, routingkey }, 'result published to AMQP');
  }

  /** A result the broker refused: tried again later (holding its claim), or parked. */
  private async refused(
    coordinator: Coordinator,
    taken: Taken,
    acl: readonly Acl[],
    err: PublishRefused,
  ): Promise<void> {
    const now = Date.now();
    const failing = this.failing.get(taken.path) ?? { attempts: 0, first: now, next: now };
    failing.attempts += 1;
    const parkAt = failing.first + this.options.parkAfterMs;
    if (err.kind === 'invalid' || now >= parkAt)
      return this.park(coordinator, taken, acl, err.message, failing.attempts, failing.first);
    const backoff = Math.min(RETRY_BASE_MS * 2 ** (failing.attempts - 1), RETRY_MAX_MS);
    failing.next = Math.min(now + backoff, parkAt);
    this.failing.set(taken.path, failing);
    this.options.logger.warn(
      {
        path: taken.path,
        exchange: taken.out.address.exchange ?? '',
        routingkey: taken.out.address.routingkey,
        reason: err.message,
        attempt: failing.attempts,
        retryInMs: failing.next - now,
      },
      'result not published; retrying',
    );
  }

  /** Moves a result to the parked area (with its claim gone), in one multi. */
  private async park(
    coordinator: Coordinator,
    taken: Taken,
    acl: readonly Acl[],
    reason: string,
    attempts: number,
    first = Date.now(),
  ): Promise<void> {
    const { dir } = forwarderPaths(this.options.world);
    const exchange = taken.out.address.exchange ?? '';
    const routingkey = taken.out.address.routingkey;
    const ops = await parkOps(
      coordinator,
      this.options.world,
      acl,
      taken.path,
      taken.version,
      taken.recorded,
      {
        from: dir,
        exchange,
        routingkey,
        reason,
        attempts,
        firstFailedAt: new Date(first).toISOString(),
      },
    );
    await coordinator.multi([...ops, { op: 'delete', path: taken.claim }]);
    this.failing.delete(taken.path);
    this.options.logger.error(
      { path: taken.path, parked: ops[0]?.path, exchange, routingkey, reason, attempts },
      'result parked: it could not be published (zoott parked lists, retries and drops it)',
    );
  }
}

/**
 * Creates `path` (in the world's reply area) and what is missing above it with `acl`, up to
 * the world's node in the area, which is made as `init` makes it: nothing shared is created
 * with the world's ACL.
 */
async function ensure(coordinator: Coordinator, path: string, acl: readonly Acl[]): Promise<void> {
  if ((await coordinator.exists(path)) !== null) return;
  await ensureWorldPath(coordinator, path, acl);
}

export { ensure as ensureBridgePath };
