import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ZOOTT_VERSION } from '@zoott/core';
import { beforeAll, expect, it } from 'vitest';
import { assertBuilt, zoott } from './helpers.js';

const WORKER_BIN = fileURLToPath(new URL('../../../apps/worker/dist/bin.js', import.meta.url));

beforeAll(assertBuilt);

it('zoott --version and zoott-worker --version report the one zoott version', async () => {
  const cli = await zoott(['--version']);
  expect(cli.code, cli.stderr).toBe(0);
  expect(cli.stdout.trim()).toBe(ZOOTT_VERSION);
  const worker = await promisify(execFile)(process.execPath, [WORKER_BIN, '--version']);
  expect(worker.stdout.trim()).toBe(ZOOTT_VERSION);
});
