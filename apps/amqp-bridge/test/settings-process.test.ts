import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BRIDGE_BIN } from './harness.js';

/** Runs the built bridge with `args` and `env` only (no ZooKeeper, no RabbitMQ needed). */
function bridge(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BRIDGE_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Printed = {
  configFile: string | null;
  settings: Record<string, { value: unknown; source: string }>;
};

describe('zoott-amqp-bridge settings', () => {
  let dir: string;
  beforeAll(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'zoott-bridge-settings-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('flag over environment over file over default, with the source of each; passwords masked', () => {
    const file = join(dir, 'bridge.yaml');
    writeFileSync(file, 'world: from-file\njobQueue: q-file\nraceQueue: r-file\nprefetch: 4\n');
    const r = bridge(['--config', file, '--print-config', '--json', '--job-queue', 'q-flag'], {
      ZOOTT_AMQP_JOB_QUEUE: 'q-env',
      ZOOTT_AMQP_RACE_QUEUE: 'r-env',
      ZOOTT_AMQP_URL: 'amqps://bridge:s3cret@mq1:5671/prod',
      ZOOTT_AUTH: 'ops:zk-secret',
    });
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as Printed;
    expect(doc.configFile).toBe(file);
    expect(doc.settings.jobQueue).toEqual({ value: 'q-flag', source: 'flag' });
    expect(doc.settings.raceQueue).toEqual({ value: 'r-env', source: 'env' });
    expect(doc.settings.world).toEqual({ value: 'from-file', source: 'file' });
    expect(doc.settings.prefetch).toEqual({ value: 4, source: 'file' });
    expect(doc.settings.declareQueues).toEqual({ value: true, source: 'default' });
    expect(doc.settings.amqpUrl?.value).toBe('amqps://bridge:****@mq1:5671/prod');
    expect(doc.settings.auth?.value).toEqual(['ops:****']);
    expect(r.stdout).not.toMatch(/s3cret|zk-secret/);
    const text = bridge(['--config', file, '--print-config']);
    expect(text.stdout).toMatch(/^jobQueue\s+q-file\s+\(file\)$/m);
  });

  it('a malformed credential is masked whole: a lone word may be the password', () => {
    const r = bridge(['--print-config', '--json'], { ZOOTT_AUTH: 'hunter2,digest:pw2,ops:zk' });
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as Printed;
    expect(doc.settings.auth?.value).toEqual(['****', 'digest:****', 'ops:****']);
    expect(r.stdout).not.toMatch(/hunter2|pw2/);
  });

  it('bad values exit 2 naming the setting; an unknown config key too', () => {
    const bad = bridge(['--print-config', '--prefetch', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--prefetch: must be a whole number/);
    const level = bridge(['--print-config'], { ZOOTT_LOG_LEVEL: 'loud' });
    expect(level.code).toBe(2);
    expect(level.stderr).toMatch(/ZOOTT_LOG_LEVEL: must be one of trace, .*, silent$/m);
    const url = bridge(['--print-config'], { ZOOTT_AMQP_URL: 'http://mq1' });
    expect(url.code).toBe(2);
    expect(url.stderr).toMatch(/ZOOTT_AMQP_URL: must start with amqp:\/\/ or amqps:\/\//);
    const file = join(dir, 'typo.yaml');
    writeFileSync(file, 'jobQeue: jobs\n');
    const typo = bridge(['--config', file, '--print-config']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/jobQeue: unknown setting/);
    const missing = bridge(['--print-config'], {
      ZOOTT_AMQP_BRIDGE_CONFIG: join(dir, 'none.yaml'),
    });
    expect(missing.code).toBe(2);
  });

  it('TLS files are read before anything connects: unreadable, or a certificate without its key, exit 2 naming the setting', () => {
    // No ZooKeeper and no broker listen on these addresses: the check comes first.
    const nowhere = { ZOOTT_CONNECT: '127.0.0.1:9', ZOOTT_AMQP_URL: 'amqps://u:p@127.0.0.1:9' };
    const ca = bridge(['--amqp-ca', join(dir, 'no-ca.pem')], nowhere);
    expect(ca.code).toBe(2);
    expect(ca.stderr).toMatch(/--amqp-ca: cannot read .*no-ca\.pem \(ENOENT\)/);
    const pem = join(dir, 'client.pem');
    writeFileSync(pem, 'not read: the key is missing first\n');
    const lone = bridge([], { ...nowhere, ZOOTT_AMQP_CERT: pem });
    expect(lone.code).toBe(2);
    expect(lone.stderr).toMatch(/ZOOTT_AMQP_CERT: a client certificate and its key go together/);
    const keyOnly = bridge(['--amqp-key', pem], nowhere);
    expect(keyOnly.code).toBe(2);
    expect(keyOnly.stderr).toMatch(
      /--amqp-key: a client certificate and its key go together: give both/,
    );
  });
});
