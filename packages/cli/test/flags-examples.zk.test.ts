import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Coordinator,
  createEngine,
  type Engine,
  listRateLimits,
  listSchedules,
  readRetention,
} from '@zoott/core';
import { parkOps, publishResult, replyDir } from '@zoott/jobs';
import { worldAcl } from '@zoott/jobs/internal';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type ExampleStep, helpExamples, runExamples, settleTask } from './help-examples.js';
import { assertBuilt, freshConnect, json, session } from './helpers.js';

// Every example a verb's --help shows, run as written through the built binary against the
// real ZooKeeper (ZOOTT_CONNECT names the test's namespace, ZOOTT_WORLD=files, the working
// directory is a scratch one; `127.0.0.1:2181` in an example is the test's server), each
// followed by a look at what ZooKeeper then holds. An example added to a verb's help fails
// the first test until it is run here or named in ELSEWHERE with the test that runs it.
const SLOW = 600_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Examples run by other test files (a long-running server, a pipe, a real job worker). */
const ELSEWHERE: Record<string, string> = {
  'zoott --connect 127.0.0.1:2181 dashboard --world files --read-only':
    'flags-dashboard.zk.test.ts (the server, read-only)',
  'zoott dashboard --host 0.0.0.0 --token "$(openssl rand -hex 16)"':
    'verbs.zk.test.ts (dashboard --host, --token; the example needs a shell for $(...))',
  'zoott demo --connect 127.0.0.1:2181/zoott-demo --workers 3': 'demo.test.ts (--workers)',
  'zoott submit job.json --wait': 'operator-surface.zk.test.ts (submit --wait, a real worker)',
  'zoott watch --json | jq .key': 'verbs.zk.test.ts (watch --json; the example pipes to jq)',
  'zoott watch --progress': 'job-control.zk.test.ts (watch --progress)',
  "zoott wait --task 'requestFile_a|downloadFile_a' --timeout 600":
    'task-end.zk.test.ts (wait --task, the task run by a worker)',
  "zoott --zk-tls-cert ops.pem --zk-tls-key ops.key --acl 'x509:CN=ops,O=example:cdrwa' lock-down files":
    "secured-zookeeper.zk.test.ts (an x509 world: lock-down --acl x509:<the test certificate's DN>, over TLS with that certificate)",
  'zoott demo                      # embedded, no ZooKeeper needed':
    'demo.test.ts (the embedded demo); pack-install.test.ts (npx zoott demo, installed)',
  'zoott demo --dashboard          # then open the URL it prints (with ?token=)':
    'flags-dashboard.zk.test.ts (demo --dashboard)',
};

const state = async (engine: Engine, key: string[]) => (await engine.task(key))?.state ?? 'gone';

/**
 * Parks a result of world `world` as the AMQP bridge does (from its reply directory), or
 * under `name` when given (the name an example uses).
 */
async function parkAs(c: Coordinator, world: string, name?: string): Promise<void> {
  const result = { stdout: 'x\n', 'zoott~amqp': { exchange: 'results', routingkey: 'rk-nobody' } };
  const address = { exchange: 'zoott~amqp', routingkey: world };
  const path = await publishResult(c, address, result, { world });
  const { stat } = await c.get(path);
  const acl = await worldAcl(c, world);
  const ops = await parkOps(c, world, acl, path, stat.version, result, {
    from: replyDir(address, world),
    exchange: 'results',
    routingkey: 'rk-nobody',
    reason: 'unroutable: no queue is bound to routing key "rk-nobody"',
    attempts: 3,
    firstFailedAt: new Date().toISOString(),
  });
  const [park, ...rest] = ops;
  if (name !== undefined && park?.op === 'create')
    park.path = `${park.path.slice(0, park.path.lastIndexOf('/'))}/${name}`;
  await c.multi([park!, ...rest]);
}
const CHILD = ['requestFile_a', 'downloadFile_a'];

/** The examples in the order they run, each with what it must leave in ZooKeeper. */
const STEPS: Record<string, ExampleStep> = {
  'zoott --connect 127.0.0.1:2181/myapp init files': {
    before: async ({ c }) => {
      await c.create('/myapp');
    },
    check: async (_r, { c }) => expect(await c.exists('/myapp/zoott_files')).not.toBeNull(),
  },
  'zoott --connect 127.0.0.1:2181/myapp worlds': {
    check: (r) => expect(r.stdout).toMatch(/^files\b/m),
  },
  'zoott init files --completed 7d --max-completed 500000 --results 1h': {
    check: async (_r, { c }) => {
      const { settings, stored } = await readRetention(c, 'files');
      expect(stored).toBe(true);
      expect(settings.completed).toEqual({ maxAgeMs: 7 * DAY, maxCount: 500_000 });
      expect(settings.results.maxAgeMs).toBe(HOUR);
    },
  },
  'zoott retention files': {
    check: (r) => expect(r.stdout).toMatch(/completed\s+(7d|168h), at most 500000/),
  },
  'zoott retention files --completed 24h --max-completed 100000 --results 1h': {
    check: async (_r, { c }) => {
      const { settings } = await readRetention(c, 'files');
      expect(settings.completed).toEqual({ maxAgeMs: DAY, maxCount: 100_000 });
      expect(settings.results.maxAgeMs).toBe(HOUR);
    },
  },
  'zoott retention files --completed forever --max-completed unlimited   # grows without bound': {
    check: async (_r, { c }) =>
      expect((await readRetention(c, 'files')).settings.completed).toEqual({
        maxAgeMs: null,
        maxCount: null,
      }),
  },
  'zoott worlds --json': {
    check: (r) => expect(JSON.stringify(json(r))).toContain('"files"'),
  },
  'zoott queue requestFile_a --type requestFile --data \'{"url":"http://x/a"}\'': {
    check: async (_r, { engine }) =>
      expect(await engine.task(['requestFile_a'])).toMatchObject({
        type: 'requestFile',
        data: { url: 'http://x/a' },
      }),
  },
  "zoott queue downloadFile --type downloadFile --parent-name 'requestFile_(.*)' --child-name 'downloadFile_{1}'":
    {
      check: async (_r, { engine }) =>
        expect(await engine.task(CHILD)).toMatchObject({ type: 'downloadFile' }),
    },
  'zoott queue report_nightly --type report --at 2026-11-27T02:00:00Z': {
    check: async (_r, { engine }) =>
      expect((await engine.task(['report_nightly']))?.notBefore).toBe(
        Date.parse('2026-11-27T02:00:00Z'),
      ),
  },
  'zoott queue --from tasks.jsonl': {
    before: async ({ cwd }) => {
      const lines = [{ name: 'from_1', type: 'fromFile', data: { n: 1 } }, { name: 'from_2' }];
      writeFileSync(
        join(cwd, 'tasks.jsonl'),
        lines.map((l) => JSON.stringify({ type: 'fromFile', ...l })).join('\n'),
      );
    },
    check: async (_r, { engine }) => {
      expect(await engine.task(['from_1'])).toMatchObject({ type: 'fromFile', data: { n: 1 } });
      expect(await engine.task(['from_2'])).toMatchObject({ type: 'fromFile' });
    },
  },
  'zoott --world files tree': {
    check: (r) => expect(r.stdout).toMatch(/requestFile_a[\s\S]*downloadFile_a/),
  },
  'zoott tree requestFile_a': {
    check: (r) => {
      expect(r.stdout).toMatch(/downloadFile_a/);
      expect(r.stdout).not.toMatch(/report_nightly/);
    },
  },
  'zoott show "requestFile_a|downloadFile_a"': {
    check: (r) => expect(r.stdout).toMatch(/downloadFile/),
  },
  'zoott status --json': {
    check: (r) => expect(json(r)).toMatchObject({ paused: { world: false, types: [] } }),
  },
  'zoott ls failed --json': {
    before: async ({ engine }) => {
      // A child runs once its parent is done.
      await settleTask(engine, ['requestFile_a'], 'complete');
      await settleTask(engine, CHILD, 'fail');
    },
    check: (r) =>
      expect(json<{ tasks: { key: string }[] }>(r).tasks.map((t) => t.key)).toEqual([
        'requestFile_a|downloadFile_a',
      ]),
  },
  'zoott retry "requestFile_a|downloadFile_a"': {
    check: async (_r, { engine }) => expect(await state(engine, CHILD)).toBe('pending'),
  },
  'zoott retry --all-failed': {
    before: async ({ engine }) => settleTask(engine, CHILD, 'fail'),
    check: async (_r, { engine }) => expect(await state(engine, CHILD)).toBe('pending'),
  },
  'zoott cancel requestFile_a --subtree': {
    check: async (_r, { engine }) => {
      expect(await state(engine, CHILD)).not.toBe('pending');
      expect(await state(engine, ['requestFile_a'])).not.toBe('pending');
      expect(await state(engine, ['from_1'])).toBe('pending');
    },
  },
  'zoott pause files': {
    check: async (_r, { engine }) =>
      expect(await engine.pauseState()).toEqual({ world: true, types: [] }),
  },
  'zoott pause files --type downloadFile --json': {
    check: async (r, { engine }) => {
      const paused = { world: true, types: ['downloadFile'] };
      expect(json(r)).toEqual({ world: 'files', paused });
      expect(await engine.pauseState()).toEqual(paused);
    },
  },
  'zoott resume files --type downloadFile': {
    check: async (_r, { engine }) =>
      expect(await engine.pauseState()).toEqual({ world: true, types: [] }),
  },
  'zoott resume files': {
    check: async (_r, { engine }) =>
      expect(await engine.pauseState()).toEqual({ world: false, types: [] }),
  },
  'zoott limit files sendMail 20/s': {
    check: async (_r, { engine }) =>
      expect(await listRateLimits(engine)).toMatchObject([{ type: 'sendMail', rate: '20/s' }]),
  },
  'zoott limit files --json': {
    check: (r) => expect(json(r)).toMatchObject({ limits: [{ type: 'sendMail', rate: '20/s' }] }),
  },
  'zoott limit files sendMail --remove': {
    check: async (_r, { engine }) => expect(await listRateLimits(engine)).toEqual([]),
  },
  "zoott schedule add nightly --cron '0 2 * * *' --type report --data '{\"full\":true}' --tz Europe/Amsterdam":
    {
      check: async (_r, { engine }) =>
        expect(await listSchedules(engine)).toMatchObject([
          {
            name: 'nightly',
            cron: '0 2 * * *',
            type: 'report',
            data: { full: true },
            tz: 'Europe/Amsterdam',
          },
        ]),
    },
  'zoott schedule list --json': {
    check: (r) => expect(JSON.stringify(json(r))).toContain('"nightly"'),
  },
  'zoott schedule remove nightly': {
    check: async (_r, { engine }) => expect(await listSchedules(engine)).toEqual([]),
  },
  'zoott wait nightly-report --timeout 60': {
    publish: { address: { routingkey: 'nightly-report' }, result: { report: 'ok' } },
    check: (r) => expect(r.stdout).toMatch(/"report":\s*"ok"/),
  },
  'zoott drain --timeout 600': {
    // Drains a world with nothing left to do: the example's world here still has work.
    before: async ({ c }) => {
      await createEngine(c, { world: 'drained' }).init();
    },
    env: { ZOOTT_WORLD: 'drained' },
    check: (r) => expect(r.stdout).toMatch(/^world drained drained in /),
  },
  'zoott workers': {
    check: (r) => expect(r.stderr).toMatch(/no live workers in world files/),
  },
  'zoott clean files --completed --older-than 1h': {
    before: async ({ engine }) => {
      const claim = await engine.claim();
      if (!claim) throw new Error('nothing to claim');
      await engine.complete(claim, 'done');
    },
    check: async (r, { engine }) => {
      expect(r.stdout).toMatch(/completed: removed 0 of 0 matching/);
      expect((await engine.counts()).completed).toBe(1);
    },
  },
  'zoott clean files --failed --results --older-than 7d --dry-run --json': {
    check: (r) =>
      expect(json(r)).toMatchObject({
        dryRun: true,
        failed: { matched: 0, removed: 0 },
        results: { removed: 0 },
      }),
  },
  'zoott export /myapp -o myapp.yaml': {
    check: ({ stdout }, { cwd }) => {
      expect(stdout).toMatch(/^exported \d+ node\(s\) under \/myapp to myapp\.yaml$/m);
      expect(readFileSync(join(cwd, 'myapp.yaml'), 'utf8')).toMatch(/zoott_files/);
    },
  },
  'zoott import myapp.yaml --root /copy --user xp:123': {
    check: async (_r, { c }) => {
      // The export's top-level names are /myapp's children: they land under --root.
      expect(await c.exists('/copy/zoott_files')).not.toBeNull();
    },
  },
  'zoott lock nightly --timeout 30 -- ./backup.sh --full': {
    before: async ({ cwd }) => {
      writeFileSync(join(cwd, 'backup.sh'), '#!/bin/sh\necho "ran with $*" > backup.out\n');
      chmodSync(join(cwd, 'backup.sh'), 0o755);
    },
    check: (_r, { cwd }) =>
      expect(readFileSync(join(cwd, 'backup.out'), 'utf8')).toBe('ran with --full\n'),
  },
  'zoott parked files': {
    // A result the AMQP bridge could not publish, parked as the bridge parks it.
    before: async ({ c }) => {
      await parkAs(c, 'files');
    },
    check: (r) => {
      expect(r.stdout).toMatch(/^result-\S+ .* results\s+rk-nobody\s+3\s+unroutable/m);
      expect(r.stdout).toMatch(/world files: 1 parked result\(s\)/);
    },
  },
  'zoott parked files result-0000000042 --retry': {
    before: async ({ c }) => {
      await parkAs(c, 'files', 'result-0000000042');
    },
    check: async (r, { c }) => {
      expect(r.stdout).toBe('retrying result-0000000042\n');
      expect(await c.exists('/zoott_~parked/files/result-0000000042')).toBeNull();
      expect(await c.children('/zoott_~replies/files/zoott~amqp/files')).toHaveLength(1);
    },
  },
  'zoott parked files --all --drop --json': {
    check: async (r, { c }) => {
      expect(json<{ dropped: string[] }>(r).dropped).toHaveLength(1);
      expect(await c.children('/zoott_~parked/files')).toEqual([]);
    },
  },
  'zoott --auth alice:s3cret lock-down files': {
    check: async (r, { c }) => {
      expect(r.stdout).toMatch(/^world files locked to digest:alice:/);
      // A session without alice's credentials may no longer even read the world's ACL.
      await expect(c.getAcl('/zoott_files')).rejects.toThrow(/NO_AUTH/);
    },
  },
  'zoott --auth alice:s3cret doctor files': {
    check: (r) => expect(r.stdout).toBe('world files: no problems found\n'),
  },
  'zoott doctor files --repair --json': {
    env: { ZOOTT_AUTH: 'alice:s3cret' },
    check: (r) =>
      expect(json(r)).toEqual({
        world: 'files',
        healthy: true,
        findings: [],
        left: 0,
        quarantine: '/zoott_q/files',
        moved: [],
        notMoved: [],
        migrated: null,
      }),
  },
};

describe('every --help example, as written', { timeout: SLOW }, () => {
  let examples: string[];
  beforeAll(async () => {
    assertBuilt();
    examples = await helpExamples();
  });

  it('each example is run here or by the test named for it', () => {
    expect(examples.length).toBeGreaterThan(30);
    const covered = [...Object.keys(STEPS), ...Object.keys(ELSEWHERE)].sort();
    expect(covered).toEqual([...examples].sort());
  });

  it('runs each, in order, and checks what it left in ZooKeeper', async () => {
    const connect = await freshConnect();
    const cwd = mkdtempSync(join(tmpdir(), 'zoott-examples-'));
    const c = await session(connect);
    onTestFinished(() => rmSync(cwd, { recursive: true, force: true }));
    const env = { ZOOTT_CONNECT: connect, ZOOTT_WORLD: 'files' };
    const engine = createEngine(c, { world: 'files' });
    const server = '127.0.0.1:2181';
    await runExamples(STEPS, { connect, cwd, c, engine, env }, (w) =>
      w.startsWith(server) ? connect + w.slice(server.length) : w,
    );
  });
});
