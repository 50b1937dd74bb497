import { describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, json, zoott } from './helpers.js';

// Every step is a fresh node process talking to ZooKeeper: slow on 2 busy cores.
const SLOW = 180_000;

interface DemoJson {
  world: string;
  embedded: boolean;
  tasks: {
    key: string;
    state: string;
    children: { key: string; state: string; children: { key: string; state: string }[] }[];
  }[];
  summary: {
    tasks: number;
    completed: number;
    failed: number;
    retried: number;
    wallMs: number;
    tasksPerSecond: number;
  };
}

describe('zoott demo', { timeout: SLOW }, () => {
  it('runs embedded with no ZooKeeper: progress, final tree, summary', async () => {
    assertBuilt();
    const r = await zoott(['demo', '--items', '8'], { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/embedded in-memory coordinator/);
    expect(r.stderr).toMatch(/running: 24\/24 \(100%\)/); // piped: plain progress lines
    expect(r.stdout).toMatch(/^\/zoott_demo$/m);
    expect(r.stdout).toMatch(/└── processFile_f08 \(zoott\.job\) completed/);
    expect(r.stdout).toMatch(/downloadFile_f03 \(downloadFile\) completed \(2 attempts\)/);
    expect(r.stdout).toMatch(
      /summary {2}24 completed, 0 failed, 1 retried, wall time .*, [\d.]+ tasks\/s/,
    );
  });

  it('--json prints one document with the tree and the summary', async () => {
    const r = await zoott(['--json', 'demo', '--items', '10', '--workers', '3'], {
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const out = json<DemoJson>(r);
    expect(out.embedded).toBe(true);
    expect(out.tasks).toHaveLength(10);
    for (const t of out.tasks) {
      expect(t.state).toBe('completed');
      expect(t.children[0]!.children[0]!.state).toBe('completed');
    }
    // Items f03 and f10 fail their first download (every 7th, from 3).
    expect(out.summary).toMatchObject({ tasks: 30, completed: 30, failed: 0, retried: 2 });
  });

  it('runs against ZooKeeper with zoott-worker processes', async () => {
    const connect = await freshConnect();
    const r = await zoott(
      ['--connect', connect, '--json', 'demo', '--items', '5', '--workers', '2'],
      { timeoutMs: 180_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2 zoott-worker processes/);
    const out = json<DemoJson>(r);
    expect(out.embedded).toBe(false);
    expect(out.summary).toMatchObject({ tasks: 15, completed: 15, failed: 0, retried: 1 });
    // The world stays for inspection, and a second run starts it afresh.
    const tree = await zoott(['--connect', connect, '--world', 'demo', '--json', 'tree']);
    expect(json<{ tasks: unknown[] }>(tree).tasks).toHaveLength(5);
    const again = await zoott(
      ['--connect', connect, '--json', 'demo', '--items', '2', '--workers', '1', '--in-process'],
      { timeoutMs: 180_000 },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(json<DemoJson>(again).summary).toMatchObject({ tasks: 6, completed: 6 });
  });
});
