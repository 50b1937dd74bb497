import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshWorld, json } from './helpers.js';

const SLOW = 120_000;
const tmp = mkdtempSync(join(tmpdir(), 'zoott-queue-from-'));

async function world() {
  const { z } = await freshWorld(['--buckets', '8']);
  const pending = async () => json<{ pending: number }>(await z(['--json', 'status'])).pending;
  return { z, pending };
}

function writeLines(name: string, lines: string[]): string {
  const file = join(tmp, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const good = (i: number) => JSON.stringify({ name: `r${i}`, type: 'req', data: { i } });

beforeAll(assertBuilt);

describe('queue --from', { timeout: SLOW }, () => {
  it('checks every line first: bad lines queue nothing, and each is named', async () => {
    const { z, pending } = await world();
    const lines = Array.from({ length: 200 }, (_, i) => good(i + 1));
    lines[9] = '{"name": "r10", "type": '; // line 10: not JSON
    lines[56] = JSON.stringify({ name: 'has space', type: 'req' }); // line 57
    lines[119] = JSON.stringify({ name: 'r120', type: 'req', colour: 'red' }); // line 120
    // Line 150: a pattern RE2 cannot run (a backreference). `(a+)+` is no longer bad: RE2
    // matches it in linear time.
    lines[149] = JSON.stringify({ name: 'c', type: 'req', parent: { name: '(a)\\1' } });
    lines[179] = JSON.stringify({ name: 'c', type: 'req', parent: 'nobody' }); // 180
    lines[189] = JSON.stringify({ name: 'r190', type: 'req', priority: 1.5 }); // 190
    const file = writeLines('bad.jsonl', lines);
    const r = await z(['queue', '--from', file]);
    expect(r.code, r.stderr).toBe(2);
    for (const [line, why] of [
      [10, /not valid JSON/],
      [57, /whitespace/],
      [120, /unknown field "colour"/],
      [150, /INVALID_PATTERN: parent\.name .*RE2 syntax.*backreferences/],
      [180, /parent nobody does not exist/],
      [190, /priority/],
    ] as const)
      expect(r.stderr).toMatch(new RegExp(`bad\\.jsonl:${line}: .*${why.source}`, why.flags));
    expect(r.stderr).toMatch(
      /6 bad line\(s\) in .*bad\.jsonl \(first: line 10\); nothing was queued/,
    );
    expect(await pending()).toBe(0);

    const asJson = await z(['--json', 'queue', '--from', file]);
    expect(asJson.code).toBe(2);
    expect(json<{ queued: number; invalid: { line: number }[] }>(asJson)).toMatchObject({
      queued: 0,
      invalid: [10, 57, 120, 150, 180, 190].map((line) => ({ line })),
    });
    expect(await pending()).toBe(0);
  });

  it('an exact parent queued earlier in the same file is fine', async () => {
    const { z, pending } = await world();
    const file = writeLines('parents.jsonl', [
      good(1),
      JSON.stringify({ name: 'kid', type: 'dl', parent: 'r1' }),
      JSON.stringify({ name: 'grandkid', type: 'dl', parent: 'r1|kid' }),
    ]);
    const r = await z(['queue', '--from', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/queued 3 task\(s\) from 3 line\(s\)/);
    expect(await pending()).toBe(3);
  });

  it('queues thousands of lines in order, with the keys it queued', async () => {
    const { z, pending } = await world();
    const lines = Array.from({ length: 2500 }, (_, i) => good(i + 1));
    lines.push(JSON.stringify({ name: 'kid', type: 'dl', parent: 'r2500', priority: 3 }));
    const file = writeLines('many.jsonl', lines);
    const r = await z(['--json', 'queue', '--from', file]);
    expect(r.code, r.stderr).toBe(0);
    const doc = json<{ lines: number; queued: number; keys: string[] }>(r);
    expect(doc).toMatchObject({ lines: 2501, queued: 2501 });
    expect(doc.keys.slice(0, 2)).toEqual(['r1', 'r2']);
    expect(doc.keys[2500]).toBe('r2500|kid');
    expect(await pending()).toBe(2501);
  });

  it('when a write fails halfway, the count it prints is what ZooKeeper holds', async () => {
    const { z, pending } = await world();
    // r51 exists with another type: queueing it again as `req` fails at write time, in the
    // middle of a run of lines written together (one queueMany call): the lines before it
    // are queued, it and everything after it are not.
    expect((await z(['queue', 'r51', '-t', 'other'])).code).toBe(0);
    const file = writeLines(
      'halfway.jsonl',
      Array.from({ length: 200 }, (_, i) => good(i + 1)),
    );
    const r = await z(['--json', 'queue', '--from', file]);
    expect(r.code).not.toBe(0);
    const doc = json<{
      lines: number;
      queued: number;
      failed: { line: number; message: string; uncertain: boolean }[];
      notQueuedLines: [number, number][];
    }>(r);
    expect(doc.lines).toBe(200);
    expect(doc.failed).toEqual([
      { line: 51, message: expect.stringMatching(/r51/), uncertain: false },
    ]);
    expect(doc.queued).toBe(50);
    // Exactly what it printed is in ZooKeeper (plus the r51 queued before).
    expect(await pending()).toBe(doc.queued + 1);
    expect(doc.notQueuedLines).toEqual([[51, 200]]);
    expect(doc.failed[0]!.message).toMatch(
      /tasks\[50\]: task r51 already exists with type "other"/,
    );

    // Again: lines 1-50 are re-queued (they were pending), 51 still fails.
    const human = await z(['queue', '--from', file]);
    expect(human.code).not.toBe(0);
    expect(human.stderr).toMatch(/halfway\.jsonl:51: /);
    expect(human.stderr).toMatch(/not queued: line\(s\) 51-200 of /);
    expect(human.stdout).toMatch(
      /^queued 50 task\(s\) from 50 of 200 line\(s\), then a write failed$/m,
    );
    expect(await pending()).toBe(51);
  });
});
