/**
 * The built daemon, as root, removes each race's input directory once the race is recorded,
 * while another user who may write in the inputs swaps their directories for links to
 * root-only directories the whole time: nothing outside the inputs is touched, the data
 * directory's other contents included.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { submitRace } from '@zoott/jobs/internal';
import {
  freshNamespace,
  makeSystemUser,
  type SystemUser,
  settled,
  swapLinks,
  until,
  userInput,
  victimDir,
  victimIntact,
} from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  jobWorkerArgs,
  killWorkers,
  registered,
  requireBin,
  startWorker,
  type WorkerProcess,
} from './worker-bin.js';

const SWAP_MS = 10_000;
const VICTIM_FILES = 100;

describe('race input cleanup against a link-swapping user', { timeout: 180_000 }, () => {
  let ns: string;
  let client: Coordinator;
  let user: SystemUser;
  let base: string;
  let data: string;
  let victims: [string, string];
  let worker: WorkerProcess | undefined;
  const world = 'swaps';

  beforeAll(async () => {
    requireBin();
    if (process.getuid?.() !== 0) throw new Error('the worker removes as root here: run as root');
    user = makeSystemUser('zoott-t-rswap');
    base = mkdtempSync(join(tmpdir(), 'zoott-rswap-'));
    chmodSync(base, 0o755);
    data = join(base, 'data');
    mkdirSync(data, { mode: 0o755 });
    mkdirSync(join(data, 'u'), { mode: 0o755 });
    chownSync(join(data, 'u'), user.uid, user.gid);
    victims = [
      victimDir(join(base, 'victim'), VICTIM_FILES),
      victimDir(join(data, 'keep'), VICTIM_FILES),
    ];
    ns = await freshNamespace(inject('zkConnect'));
    client = await connectZk(ns);
    await createEngine(client, { world }).init();
    const w = startWorker([...jobWorkerArgs(ns, world, 'rswap', '/bin/true'), '--data-dir', data]);
    worker = w;
    await registered(client, world);
  });
  afterAll(async () => {
    if (worker) await killWorkers([worker]);
    await client?.close();
    if (base) rmSync(base, { recursive: true, force: true });
    user?.remove();
  });

  it('touches nothing outside the inputs', async () => {
    const swaps = swapLinks(user, join(data, 'u'), victims, SWAP_MS);
    let races = 0;
    try {
      while (Date.now() < swaps.end) {
        const name = `in-${races++}`;
        userInput(join(data, 'u'), name, user, { files: 1, subdirs: 8 });
        const race = await submitRace(
          client,
          { executable: '/bin/true', input: `u/${name}` },
          { world },
        );
        expect((await settled(client, race.world, race.key)).state, worker?.output()).toBe(
          'completed',
        );
        // The worker that recorded the race removes its input (or says why it kept it).
        await until(`the cleanup of ${name}`, () =>
          new RegExp(`"race":"${race.name}".*race input directory (removed|kept)`).test(
            worker!.output(),
          )
            ? true
            : undefined,
        );
      }
    } finally {
      expect(await swaps.exited).toBe(0);
    }
    expect(races).toBeGreaterThan(1);
    for (const dir of victims)
      expect(victimIntact(dir, VICTIM_FILES), `${dir} was touched`).toBe(true);
  });
});
