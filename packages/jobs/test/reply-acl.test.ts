/**
 * Reply results cannot be forged or deleted: in a shared chroot an attacker session (no
 * credentials) cannot make anything in a locked world's reply and race areas, and where the
 * world itself left a reply path or race state open (made before it was locked down, say),
 * plants forged results. A worker of a world locked to a digest user never publishes there,
 * `wait` never accepts what is there, and the reply paths the worker creates are locked.
 * Real ZooKeeper, a worker daemon running real job processes, and the `zoott wait` binary.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Coordinator, createEngine, digestAcl, isZoottError, OPEN_ACL } from '@zoott/core';
import { encodeJson } from '@zoott/core/internal';
import { freshNamespace, SELF, settled, until } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  startWorkerDaemon,
  submitJob,
  submitRace,
  type WorkerDaemon,
  waitForResult,
} from '../src/internal.js';

const CLI = fileURLToPath(new URL('../../../packages/cli/dist/bin.js', import.meta.url));
const run = promisify(execFile);
const USER = 'alice';
const PASSWORD = 'pw-reply';
const AUTH = `${USER}:${PASSWORD}`;
const LOCKED = [digestAcl(USER, PASSWORD, 'cdrwa')];
const WORLD = 'locked';

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return isZoottError(err) ? err.code : String(err);
  }
}

/** Creates `path` and its missing ancestors, open to anyone (the attacker's doing). */
async function createOpen(c: Coordinator, path: string, data?: unknown): Promise<void> {
  let at = '';
  const parts = path.split('/').slice(1);
  for (const [i, part] of parts.entries()) {
    at += `/${part}`;
    try {
      await c.create(at, i === parts.length - 1 && data ? encodeJson(data) : undefined, {
        acl: OPEN_ACL,
      });
    } catch (err) {
      if (!isZoottError(err, 'NODE_EXISTS')) throw err;
    }
  }
}

describe('reply paths of a locked world [zookeeper]', { timeout: 120_000 }, () => {
  let ns: string;
  let owner: Coordinator;
  let attacker: Coordinator;
  let daemon: WorkerDaemon;
  const warnings: string[] = [];

  beforeAll(async () => {
    ns = await freshNamespace(inject('zkConnect'));
    owner = await connectZk(ns, {
      auth: [{ scheme: 'digest', auth: AUTH }],
      defaultAcl: LOCKED,
    });
    attacker = await connectZk(ns);
    const engine = createEngine(owner, { world: WORLD });
    await engine.init();
    engine.close();
    const { pino } = await import('pino');
    const logger = pino({ level: 'warn' }, {
      write(line: string) {
        warnings.push(line);
      },
    } as NodeJS.WritableStream);
    daemon = await startWorkerDaemon({
      connect: ns,
      auth: [`digest:${AUTH}`],
      world: WORLD,
      nodeId: 'locked-1',
      allowExec: ['/bin/echo'],
      runAs: SELF,
      logger,
    });
  });
  afterAll(async () => {
    await daemon?.stop();
    await owner?.close();
    await attacker?.close();
  });

  it('a worker never publishes into an open reply path, and wait refuses it', async () => {
    const routingkey = `planted-${randomUUID()}`;
    const dir = `/zoott_~replies/${WORLD}/_default/${routingkey}`;
    // The attacker cannot make one in a locked world's reply area...
    expect(await codeOf(createOpen(attacker, dir))).toBe('NO_AUTH');
    // ... but one the world left open (before it was locked down) takes anyone's results.
    await createOpen(owner, dir);
    const forged = await attacker.create(`${dir}/result-`, encodeJson({ stdout: 'forged\n' }), {
      sequential: true,
      acl: OPEN_ACL,
    });
    const { key } = await submitJob(
      owner,
      { executable: '/bin/echo', arguments: ['real'], routingkey },
      { world: WORLD },
    );
    const rec = await settled(owner, WORLD, key);
    expect(rec.state).toBe('completed');
    expect(rec.result).toMatchObject({ stdout: 'real\n' });
    // The task completes first; the refused reply is published (and warned about) after it.
    const warned = await until('the worker to warn about the reply', () =>
      warnings.find((w) => w.includes('could not publish the result')),
    );
    expect(warned).toMatch(/not under the world's ACL/);
    // Nothing was published into the attacker's directory: only the forged node is there.
    expect(await attacker.children(dir)).toEqual([forged.slice(dir.length + 1)]);
    const refused = waitForResult(owner, { world: WORLD, routingkey, timeoutMs: 5000 });
    await expect(refused).rejects.toMatchObject({
      code: 'NO_AUTH',
      message: expect.stringMatching(
        /reply path .* is not under the world's ACL: .* has ACL \[world:anyone:cdrwa\], not the world's \[digest:alice:.*:cdrwa\]/,
      ),
    });
  });

  it('an open exchange node refuses no routing key by itself: the directory made below it is locked', async () => {
    const routingkey = `under-open-${randomUUID()}`;
    // Left open by the world itself (the attacker can make nothing in its reply area).
    expect(await codeOf(createOpen(attacker, `/zoott_~replies/${WORLD}/open-exchange`))).toBe(
      'NO_AUTH',
    );
    await createOpen(owner, `/zoott_~replies/${WORLD}/open-exchange`);
    const { key } = await submitJob(
      owner,
      { executable: '/bin/echo', arguments: ['x'], exchange: 'open-exchange', routingkey },
      { world: WORLD },
    );
    expect((await settled(owner, WORLD, key)).state).toBe('completed');
    const dir = `/zoott_~replies/${WORLD}/open-exchange/${routingkey}`;
    expect((await owner.getAcl(dir)).acl).toEqual(LOCKED);
    // The open exchange lets the attacker see the directory, not take what is in it.
    const [name] = await owner.children(dir);
    expect(await codeOf(attacker.delete(`${dir}/${name}`))).toBe('NO_AUTH');
    expect(await codeOf(attacker.delete(dir))).toBe('NOT_EMPTY');
    const got = await waitForResult(owner, {
      world: WORLD,
      exchange: 'open-exchange',
      routingkey,
      timeoutMs: 5000,
    });
    expect(got.result).toMatchObject({ stdout: 'x\n' });
  });

  it("a locked world's reply paths are created locked: others cannot read, plant or delete", async () => {
    const routingkey = `fresh-${randomUUID()}`;
    const exchange = `ex-${randomUUID().slice(0, 8)}`;
    const dir = `/zoott_~replies/${WORLD}/${exchange}/${routingkey}`;
    const { key } = await submitJob(
      owner,
      { executable: '/bin/echo', arguments: ['locked'], exchange, routingkey },
      { world: WORLD },
    );
    expect((await settled(owner, WORLD, key)).state).toBe('completed');
    const [name] = await owner.children(dir);
    for (const path of [
      `/zoott_~replies/${WORLD}`,
      `/zoott_~replies/${WORLD}/${exchange}`,
      dir,
      `${dir}/${name}`,
    ])
      expect({ path, acl: (await owner.getAcl(path)).acl }).toEqual({ path, acl: LOCKED });
    expect(await codeOf(attacker.get(`${dir}/${name}`))).toBe('NO_AUTH');
    expect(await codeOf(attacker.delete(`${dir}/${name}`))).toBe('NO_AUTH');
    expect(
      await codeOf(attacker.create(`${dir}/result-`, encodeJson({}), { sequential: true })),
    ).toBe('NO_AUTH');
    expect(await codeOf(attacker.delete(dir))).toBe('NO_AUTH');
    const got = await waitForResult(owner, { world: WORLD, exchange, routingkey, timeoutMs: 5000 });
    expect(got.result).toMatchObject({ stdout: 'locked\n' });
  });

  it("replies carry the world's ACL even from a worker whose own --acl differs", async () => {
    const world = 'wider';
    const engine = createEngine(owner, { world });
    await engine.init();
    engine.close();
    // This worker's nodes also grant bob read access; the world's root does not.
    const wider = await startWorkerDaemon({
      connect: ns,
      auth: [`digest:${AUTH}`],
      acl: [`${USER}:${PASSWORD}:cdrwa`, 'bob:pw-bob:r'],
      world,
      nodeId: 'wider-1',
      allowExec: ['/bin/echo'],
      runAs: SELF,
      logLevel: 'silent',
    });
    try {
      const exchange = `wd-${randomUUID().slice(0, 8)}`;
      const routingkey = 'rk';
      const { key } = await submitJob(
        owner,
        { executable: '/bin/echo', arguments: ['wide'], exchange, routingkey },
        { world },
      );
      expect((await settled(owner, world, key)).state).toBe('completed');
      const dir = `/zoott_~replies/${world}/${exchange}/${routingkey}`;
      const [name] = await owner.children(dir);
      expect((await owner.getAcl(`${dir}/${name}`)).acl).toEqual(LOCKED);
      const got = await waitForResult(owner, { world, exchange, routingkey, timeoutMs: 5000 });
      expect(got.result).toMatchObject({ stdout: 'wide\n' });
    } finally {
      await wider.stop();
    }
  });

  it('wait skips a result node that does not carry the world ACL, and says so', async () => {
    const routingkey = `mixed-${randomUUID()}`;
    const exchange = `mx-${randomUUID().slice(0, 8)}`;
    const dir = `/zoott_~replies/${WORLD}/${exchange}/${routingkey}`;
    await owner.create(`/zoott_~replies/${WORLD}/${exchange}`, undefined, { acl: LOCKED });
    await owner.create(dir, undefined, { acl: LOCKED });
    // Left over from before the path was locked, say: open, so anyone may have written it.
    const stale = await owner.create(`${dir}/result-`, encodeJson({ stale: true }), {
      sequential: true,
      acl: OPEN_ACL,
    });
    const { key } = await submitJob(
      owner,
      { executable: '/bin/echo', arguments: ['good'], exchange, routingkey },
      { world: WORLD },
    );
    expect((await settled(owner, WORLD, key)).state).toBe('completed');
    const skipped: string[] = [];
    const got = await waitForResult(owner, {
      world: WORLD,
      exchange,
      routingkey,
      timeoutMs: 5000,
      onUntrusted: (path) => skipped.push(path),
    });
    expect(got.result).toMatchObject({ stdout: 'good\n' });
    expect(skipped).toEqual([stale]);
    expect(await owner.exists(stale)).not.toBeNull();
  });

  it('race state left open, with a forged winner planted, is refused: the race fails for good', async () => {
    const name = `race-${randomUUID().slice(0, 8)}`;
    const base = `/zoott_~races/${WORLD}/${name}`;
    expect(await codeOf(createOpen(attacker, base))).toBe('NO_AUTH');
    await createOpen(owner, base, { started: new Date().toISOString(), racers: 1 });
    await attacker.create(
      `${base}/winner`,
      encodeJson({ index: 0, at: new Date().toISOString(), record: { stdout: 'forged' } }),
      { acl: OPEN_ACL },
    );
    const { key, world } = await submitRace(
      owner,
      { executable: '/bin/echo', input: [{ data: 'a\n' }] },
      { world: WORLD, name },
    );
    const rec = await settled(owner, world, key);
    expect(rec.state).toBe('failed');
    expect(rec.attempts).toBe(1);
    expect(rec.error?.message).toMatch(/race state .* not the world's .*could be forged/);
  });

  it('`zoott wait` refuses a planted reply path, naming it', async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (pnpm build)`);
    const routingkey = `cli-${randomUUID()}`;
    const dir = `/zoott_~replies/${WORLD}/_default/${routingkey}`;
    await createOpen(owner, dir);
    await attacker.create(`${dir}/result-`, encodeJson({ forged: true }), {
      sequential: true,
      acl: OPEN_ACL,
    });
    const out = await run(
      process.execPath,
      [
        CLI,
        ...['--connect', ns, '--auth', AUTH, '--world', WORLD],
        ...['wait', routingkey, '--timeout', '5'],
      ],
      { encoding: 'utf8' },
    ).catch((err: { code: number; stdout: string; stderr: string }) => err);
    expect('code' in out ? out.code : 0).not.toBe(0);
    expect(out.stdout).not.toContain('forged');
    expect(out.stderr).toMatch(/not under the world's ACL/);
  });
});
