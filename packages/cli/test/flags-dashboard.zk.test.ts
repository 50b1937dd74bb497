import { createEngine } from '@zoott/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { shellWords } from './help-examples.js';
import { assertBuilt, freshConnect, json, session, start, until, zoott } from './helpers.js';

// The dashboard's and the demo's flags through the built binary: --read-only refuses
// changes (and a dashboard without it makes them, so the refusal is the flag's), demo
// --dashboard serves the demo's world, demo --embedded keeps off a configured ZooKeeper.
const SLOW = 240_000;
const URL_LINE = /(http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)/;

beforeAll(assertBuilt);

/** POSTs an operator action as the dashboard's own page does (same-origin JSON). */
async function post(url: string, token: string, action: string, body: object) {
  const res = await fetch(`${url}/api/${action}?token=${token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('zoott dashboard --read-only', { timeout: SLOW }, () => {
  it('the --help example serves the world and refuses every change; without it they work', async () => {
    const connect = await freshConnect();
    expect((await zoott(['--connect', connect, 'init', 'files'])).code).toBe(0);
    const engine = createEngine(await session(connect), { world: 'files' });
    const example = shellWords(
      'zoott --connect 127.0.0.1:2181 dashboard --world files --read-only',
    );
    // As written but for the address of the test's server and a free port (7070 may be taken).
    const args = example.map((w) => (w === '127.0.0.1:2181' ? connect : w));
    const ro = start([...args, '--port', '0']);
    await until(() => URL_LINE.test(ro.err()), 'the dashboard URL');
    const [, url, token] = ro.err().match(URL_LINE)!;
    const config = await (await fetch(`${url}/api/config?token=${token}`)).json();
    expect(config).toMatchObject({ readOnly: true, world: 'files' });
    for (const action of ['pause', 'retry-all', 'cancel', 'retry']) {
      const r = await post(url!, token!, action, { world: 'files', key: 'x' });
      expect(r.status, action).toBe(403);
      expect(
        String((r.body.error as { message?: string })?.message ?? JSON.stringify(r.body)),
      ).toMatch(/read-only/);
    }
    expect(await engine.pauseState()).toEqual({ world: false, types: [] });
    ro.kill('SIGINT');
    expect((await ro.exited).code).toBe(130);

    const rw = start(['--connect', connect, 'dashboard', '--world', 'files', '--port', '0']);
    await until(() => URL_LINE.test(rw.err()), 'the dashboard URL');
    const [, url2, token2] = rw.err().match(URL_LINE)!;
    const paused = await post(url2!, token2!, 'pause', { world: 'files' });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(await engine.pauseState()).toMatchObject({ world: true });
    rw.kill('SIGINT');
    expect((await rw.exited).code).toBe(130);
  });
});

describe('zoott demo --dashboard and --embedded', { timeout: SLOW }, () => {
  it('--dashboard serves the finished demo world until interrupted', async () => {
    const demo = start(['demo', '--items', '3', '--workers', '2', '--dashboard', '--port', '0']);
    await until(() => URL_LINE.test(demo.err()), 'the dashboard URL');
    await until(() => /summary/.test(demo.out()), 'the demo to finish', 120_000);
    const [, url, token] = demo.err().match(URL_LINE)!;
    // Still served after the run: the finished world, all of it completed.
    const counts = await (await fetch(`${url}/api/counts?world=demo&token=${token}`)).json();
    expect(counts).toMatchObject({ pending: 0, working: 0, completed: 9, failed: 0 });
    demo.kill('SIGINT');
    expect((await demo.exited).code).toBe(130);
  });

  it('--embedded runs in memory even with --connect, and leaves ZooKeeper untouched', async () => {
    const connect = await freshConnect();
    const r = await zoott(['--connect', connect, '--json', 'demo', '--items', '2', '--embedded'], {
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(json<{ embedded: boolean }>(r).embedded).toBe(true);
    expect(r.stderr).toMatch(/embedded in-memory coordinator/);
    expect(await (await session(connect)).children('/')).toEqual([]);
  });
});
