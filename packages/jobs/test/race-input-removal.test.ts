// Removing a race's input directory as root while another user, who may write in it, swaps
// its directories for links to root-only directories, over and over for several seconds: the
// removal must never follow a link, and never touch anything outside the input.
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  makeSystemUser,
  type SystemUser,
  swapLinks,
  userInput,
  victimDir,
  victimIntact,
} from '@zoott/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeRaceInputDir } from '../src/handlers/race-input.js';

const SWAP_MS = 6000;
const VICTIM_FILES = 100;

describe('race input removal against a link-swapping user (root)', { timeout: 120_000 }, () => {
  let user: SystemUser;
  let base: string;
  let data: string;
  let victims: [string, string];

  beforeAll(() => {
    if (process.getuid?.() !== 0) throw new Error('this test removes as root, so it runs as root');
    user = makeSystemUser('zoott-t-swap');
    base = mkdtempSync(join(tmpdir(), 'zoott-swap-'));
    chmodSync(base, 0o755);
    data = join(base, 'data');
    mkdirSync(data, { mode: 0o755 });
    // The other user may write here: inputs live in it, and it may swap them.
    mkdirSync(join(data, 'u'), { mode: 0o755 });
    chownSync(join(data, 'u'), user.uid, user.gid);
    // One victim outside the data directory, one beside the input inside it.
    victims = [
      victimDir(join(base, 'victim'), VICTIM_FILES),
      victimDir(join(data, 'keep'), VICTIM_FILES),
    ];
  });
  afterAll(() => {
    if (base) rmSync(base, { recursive: true, force: true });
    user?.remove();
  });

  it(`removes only the input, for ${SWAP_MS / 1000} s of swaps`, async () => {
    const swaps = swapLinks(user, join(data, 'u'), victims, SWAP_MS);
    let removals = 0;
    let removed = 0;
    try {
      while (Date.now() < swaps.end) {
        const name = `in-${removals++}`;
        userInput(join(data, 'u'), name, user, { files: 20, subdirs: 8 });
        const r = await removeRaceInputDir(data, `u/${name}`);
        if ('removed' in r) removed++;
      }
    } finally {
      expect(await swaps.exited).toBe(0);
    }
    for (const dir of victims)
      expect(victimIntact(dir, VICTIM_FILES), `${dir} was touched`).toBe(true);
    expect(existsSync(data)).toBe(true);
    // The loop ran while the swaps did. How many removals a swap stopped depends on how the
    // two processes were scheduled (on a loaded machine, all of them can be): a stopped one
    // backs off and leaves the input. Once the swaps are over, the next removal goes through.
    expect(removals).toBeGreaterThan(2);
    const last = `in-${removals}`;
    userInput(join(data, 'u'), last, user, { files: 20, subdirs: 8 });
    const after = await removeRaceInputDir(data, `u/${last}`);
    expect(after, `${removed} of ${removals} went through during the swaps`).toHaveProperty(
      'removed',
    );
    expect(existsSync(join(data, 'u', last))).toBe(false);
  });
});
