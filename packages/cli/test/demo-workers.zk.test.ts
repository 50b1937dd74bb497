import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProxy } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/exit-codes.js';
import { assertBuilt, freshConnect, start, until, zoott } from './helpers.js';

beforeAll(assertBuilt);

// The demo's zoott-worker processes, as a user meets them: a config file and environment of
// their own, and workers that die.
describe('zoott demo --connect: its worker processes', { timeout: 240_000 }, () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'zoott-demo-workers-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("read none of the user's worker settings: a metrics port in zoott.config.yaml and ZOOTT_METRICS_PORT do not make four workers collide", async () => {
    // The port is taken, as by the user's own worker: any demo worker that tried it would die.
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      writeFileSync(
        path.join(dir, 'zoott.config.yaml'),
        `worker:\n  metricsPort: ${port}\n  concurrency: 1\n`,
      );
      const connect = await freshConnect();
      const r = await zoott(['--connect', connect, 'demo', '--items', '4', '--workers', '4'], {
        cwd: dir,
        env: { ZOOTT_METRICS_PORT: String(port) },
        timeoutMs: 180_000,
      });
      expect(r.code, r.stderr).toBe(ExitCode.OK);
      expect(r.stderr).toMatch(/4 zoott-worker processes/);
      expect(r.stderr).not.toMatch(/EADDRINUSE|zoott-worker demo-p\d/);
      expect(r.stdout).toMatch(/summary {2}12 completed, 0 failed/);
    } finally {
      taken.close();
    }
  });

  it('that exit end the demo at once, with their own error and exit code', async () => {
    const connect = await freshConnect();
    const chroot = connect.slice(connect.indexOf('/'));
    const proxy = await startProxy(connect.slice(0, connect.indexOf('/')));
    try {
      const demo = start(['--connect', `${proxy.hostPort}${chroot}`, 'demo', '--items', '6'], {
        cwd: dir,
      });
      // The demo has its own session by now and has started its workers: from here on the
      // proxy answers no new connection, so the workers cannot connect (they give up after
      // their connect timeout, 10 s) while the demo's own session carries on.
      await until(() => /zoott-worker processes/.test(demo.err()), 'the workers started');
      void proxy.holdNextConnections(1000);
      const r = await demo.exited;
      expect(r.code, r.stderr).toBe(ExitCode.UNREACHABLE);
      expect(r.stderr).toMatch(/zoott-worker demo-p\d exited with code 3/);
      // The worker's own words, not a summary of them.
      expect(r.stderr).toMatch(
        /error: zoott-worker demo-p\d exited with code 3 before the demo ended:\nzoott-worker: .*could not connect to /,
      );
      expect(r.stderr).not.toMatch(/summary/);
    } finally {
      await proxy.close();
    }
  });
});
