/**
 * The whole bench, as `pnpm bench --quick --json` runs it (small counts, every phase, one
 * ZooKeeper, then the pending levels and the unblock phase on fresh ones). It checks that the
 * run ends and that its document holds every key bench/README.md documents, so neither the
 * harness nor the README can drift; the numbers are not judged (speed is the bench's business).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');
const README = readFileSync(path.join(ROOT, 'bench/README.md'), 'utf8');

/** The keys the README's table of measures names (first column, each in backticks). */
function tableKeys(): string[] {
  const table = README.slice(README.indexOf('| key | what is measured |'));
  const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
  return rows.flatMap((row) =>
    [...row.split('|')[1]!.matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]!),
  );
}

/** Every `details.<key>` the README names in full. */
function detailKeys(): string[] {
  return [...new Set([...README.matchAll(/`details\.([a-z0-9_]+)`/g)].map((m) => m[1]!))];
}

describe('bench: the whole run', () => {
  it('--quick --json ends with every documented key, and writes its document where asked', {
    timeout: 600_000,
  }, async () => {
    const results = mkdtempSync(path.join(os.tmpdir(), 'zoott-bench-run-'));
    try {
      const { stdout } = await exec(process.execPath, ['bench/run.mjs', '--quick', '--json'], {
        cwd: ROOT,
        env: { ...process.env, BENCH_RESULTS_DIR: results },
        timeout: 540_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      const doc = JSON.parse(stdout) as Record<string, unknown>;
      const keys = tableKeys();
      expect(keys.length).toBeGreaterThanOrEqual(14);
      for (const key of keys) expect(doc, key).toHaveProperty(key);
      const details = doc.details as Record<string, unknown>;
      const named = detailKeys();
      expect(named.length).toBeGreaterThanOrEqual(10);
      for (const key of named) expect(details, `details.${key}`).toHaveProperty(key);
      expect(Object.keys(doc.ratios as object).sort()).toEqual([
        'amqp_drain_vs_plain',
        'amqp_messages_vs_plain',
        'amqp_results_vs_plain',
        'drain_vs_raw',
        'job_group_vs_spawn',
        'job_vs_spawn',
        'latency_p99_vs_floor',
        'pending_100k_vs_1k',
        'queue_many_vs_raw',
        'recovery_claim_vs_floor',
        'recovery_vs_floor',
        'tls_drain_vs_plain',
        'tls_raw_vs_plain',
      ]);
      for (const ok of Object.values(doc.pass as object)) expect(typeof ok).toBe('boolean');
      expect(doc.setup).toMatchObject({ workers: 4, quick: true });
      expect(JSON.parse(readFileSync(path.join(results, 'latest.json'), 'utf8'))).toEqual(doc);
    } finally {
      rmSync(results, { recursive: true, force: true });
    }
  });
});
