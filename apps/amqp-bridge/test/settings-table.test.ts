import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { helpFindings, readmeFindings, unitFindings } from '@zoott/jobs/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { BRIDGE_SETTINGS, type BridgeSettings } from '../src/settings.js';
import { assertBuilt, BRIDGE_BIN } from './harness.js';

// Every setting of the bridge's one table, driven through the built binary as an operator
// would: only the flag, then only the environment variable, then only the config-file key,
// read back with --print-config --json. The examples are typed by the settings' keys, so a
// setting added to the table does not compile here until it has one: covered by construction.
const README = fileURLToPath(new URL('../README.md', import.meta.url));

/** One value per setting, each different from its default, as a flag or variable takes it. */
const EXAMPLES: Record<keyof BridgeSettings, string> = {
  connect: 'zk9:2181/flags',
  auth: 'ops:zk-secret',
  authFile: '/etc/zoott/bridge-auth',
  sessionTimeoutMs: '4000',
  world: 'flagworld',
  amqpUrl: 'amqps://bridge:s3cret@mq9:5671/prod',
  amqpCa: '/etc/zoott/ca.pem',
  amqpCert: '/etc/zoott/client.pem',
  amqpKey: '/etc/zoott/client.key',
  jobQueue: 'jobs-x',
  raceQueue: 'races-x',
  deadLetterExchange: 'dlx-x',
  prefetch: '3',
  declareQueues: 'false',
  createWorld: 'true',
  replyExchanges: 'results,res.*',
  maxDeliveries: '9',
  parkAfterMs: '5000',
  logLevel: 'warn',
  zkTls: 'true',
  zkTlsCa: '/etc/zoott/zk-ca.pem',
  zkTlsCert: '/etc/zoott/zk-client.pem',
  zkTlsKey: '/etc/zoott/zk-client.key',
  zkTlsKeyPassphrase: 'key-pass',
  zkTlsKeyPassphraseFile: '/etc/zoott/zk-key-pass',
  zkTlsSkipHostnameCheck: 'true',
  zkSasl: 'bridge:sasl-secret',
  zkSaslFile: '/etc/zoott/zk-sasl',
  trace: 'true',
};

/** What --print-config shows for the example: passwords masked, numbers and booleans typed. */
const SHOWN: Partial<Record<keyof BridgeSettings, unknown>> = {
  auth: ['ops:****'],
  amqpUrl: 'amqps://bridge:****@mq9:5671/prod',
  sessionTimeoutMs: 4000,
  prefetch: 3,
  declareQueues: false,
  zkTls: true,
  zkTlsSkipHostnameCheck: true,
  zkTlsKeyPassphrase: '****',
  zkSasl: '****',
  createWorld: true,
  replyExchanges: ['results', 'res.*'],
  maxDeliveries: 9,
  parkAfterMs: 5000,
  trace: true,
};

/** The example in a config file's own form. */
const FILE_VALUE: Partial<Record<keyof BridgeSettings, unknown>> = {
  auth: ['ops:zk-secret'],
  sessionTimeoutMs: 4000,
  prefetch: 3,
  declareQueues: false,
  zkTls: true,
  zkTlsSkipHostnameCheck: true,
  createWorld: true,
  replyExchanges: ['results', 'res.*'],
  maxDeliveries: 9,
  parkAfterMs: 5000,
  trace: true,
};

interface Printed {
  configFile: string | null;
  settings: Record<string, { value: unknown; source: string }>;
}

let home: string;

/** Runs the built bridge with `args` and `env` only (no ZooKeeper, no RabbitMQ needed). */
function printed(args: string[], env: Record<string, string> = {}): Promise<Printed> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BRIDGE_BIN, ...args, '--print-config', '--json'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`exit ${code}: ${err}`));
      else resolve(JSON.parse(out) as Printed);
    });
  });
}

/** The built bridge's --help. */
function helpText(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BRIDGE_BIN, '--help'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
  });
}

describe('zoott-amqp-bridge: every setting three ways', { timeout: 300_000 }, () => {
  beforeAll(() => {
    assertBuilt();
    home = mkdtempSync(join(tmpdir(), 'zoott-bridge-table-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('every example differs from its default, so a dropped value cannot pass', async () => {
    const defaults = await printed([]);
    for (const spec of BRIDGE_SETTINGS) {
      const shown = SHOWN[spec.key] ?? EXAMPLES[spec.key];
      expect(defaults.settings[spec.key]?.source, spec.key).not.toBe('flag');
      expect(defaults.settings[spec.key]?.value, spec.key).not.toEqual(shown);
    }
    // And the table has no setting this file lacks an example for (nor the other way).
    expect(BRIDGE_SETTINGS.map((s) => s.key).sort()).toEqual(Object.keys(EXAMPLES).sort());
  });

  for (const spec of BRIDGE_SETTINGS) {
    it(`${spec.key}: ${spec.flag}, ${spec.env} and the file key each take effect`, async () => {
      const example = EXAMPLES[spec.key];
      const shown = SHOWN[spec.key] ?? example;
      const file = join(home, `${spec.key}.yaml`);
      // 0600: a file that sets a secret may be read by nobody else.
      writeFileSync(file, toYaml({ [spec.key]: FILE_VALUE[spec.key] ?? example }), { mode: 0o600 });
      const [byFlag, byEnv, byFile] = await Promise.all([
        printed([spec.flag, example]),
        printed([], { [spec.env]: example }),
        printed(['--config', file]),
      ]);
      expect(byFlag.settings[spec.key]).toEqual({ value: shown, source: 'flag' });
      expect(byEnv.settings[spec.key]).toEqual({ value: shown, source: 'env' });
      expect(byFile.settings[spec.key]).toEqual({ value: shown, source: 'file' });
      expect(byFile.configFile).toBe(file);
    });
  }

  it('shows each default as the one it uses', () => {
    for (const s of BRIDGE_SETTINGS)
      expect(s.defaultHelp, s.key).toBe(s.fallback === undefined ? undefined : String(s.fallback));
  });

  it('documents every setting in the README table and in --help, as the table says, each in one unit', async () => {
    expect(readmeFindings(BRIDGE_SETTINGS, readFileSync(README, 'utf8'))).toEqual([]);
    const help = await helpText();
    expect(helpFindings(BRIDGE_SETTINGS, help, 'optional-value')).toEqual([]);
    expect(unitFindings(BRIDGE_SETTINGS)).toEqual([]);
  });
});
