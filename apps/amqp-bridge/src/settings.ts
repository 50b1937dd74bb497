import { existsSync } from 'node:fs';
import { ZoottError } from '@zoott/core';
import {
  type CredentialRules,
  checkLogLevel,
  checkPrivate,
  LOG_LEVEL_SETTING,
  maskCredential,
  mergeSettingSources,
  readTrusted,
  SESSION_TIMEOUT_SETTING,
  type SettingSource,
  type SettingSpecBase,
  settingError,
  TRACE_SETTING,
  type TrustRule,
  type ValueRules,
  ZK_SECURITY_SETTINGS,
  type ZkSecuritySettings,
} from '@zoott/jobs/config';
import { parse as parseYaml } from 'yaml';

/** One setting: its flag, environment variable and config-file key. */
export interface BridgeSettingSpec extends SettingSpecBase<keyof BridgeSettings> {
  fallback?: unknown;
  /** Printed masked by --print-config. */
  secret?: boolean;
}

/** The bridge's settings as flags, environment and config file give them. */
export interface BridgeSettings extends ZkSecuritySettings {
  connect?: string;
  auth?: string[];
  authFile?: string;
  sessionTimeoutMs?: number;
  world?: string;
  amqpUrl?: string;
  amqpCa?: string;
  amqpCert?: string;
  amqpKey?: string;
  jobQueue?: string;
  raceQueue?: string;
  deadLetterExchange?: string;
  prefetch?: number;
  declareQueues?: boolean;
  createWorld?: boolean;
  replyExchanges?: string[];
  maxDeliveries?: number;
  parkAfterMs?: number;
  logLevel?: string;
  trace?: boolean;
}

/**
 * Every setting, in --help order: one table for flags, environment variables, config-file
 * keys and --print-config. Precedence: flag, environment, config file, default.
 */
export const BRIDGE_SETTINGS: readonly BridgeSettingSpec[] = [
  {
    key: 'connect',
    flag: '--connect',
    env: 'ZOOTT_CONNECT',
    kind: 'string',
    arg: 'hosts[/chroot]',
    help: 'ZooKeeper connection string, with an optional chroot',
    fallback: '127.0.0.1:2181',
    defaultHelp: '127.0.0.1:2181',
  },
  {
    key: 'auth',
    flag: '--auth',
    env: 'ZOOTT_AUTH',
    kind: 'list',
    arg: 'user:password',
    help: 'ZooKeeper credentials (prefer ZOOTT_AUTH or --auth-file: a command line is readable by every local user)',
    secret: true,
  },
  {
    key: 'authFile',
    flag: '--auth-file',
    env: 'ZOOTT_AUTH_FILE',
    kind: 'string',
    arg: 'path',
    help: 'file of ZooKeeper credentials, one user:password a line',
  },
  {
    ...SESSION_TIMEOUT_SETTING,
    fallback: 10_000,
    defaultHelp: '10000',
  },
  // TLS and SASL to a secured ZooKeeper, shared with zoott-worker and the CLI.
  ...ZK_SECURITY_SETTINGS.map(({ masked, example: _example, ...row }) =>
    masked ? { ...row, secret: true } : row,
  ),
  {
    key: 'world',
    flag: '--world',
    env: 'ZOOTT_WORLD',
    kind: 'string',
    arg: 'name',
    help: 'the world jobs are queued into (its workers run them); one that was never initialised is refused (exit 5, naming the worlds that exist)',
    fallback: 'default',
    defaultHelp: 'default',
  },
  {
    key: 'createWorld',
    flag: '--create-world',
    env: 'ZOOTT_CREATE_WORLD',
    kind: 'bool',
    arg: '',
    help: 'create the world when it does not exist (without it a world that was never initialised is refused, exit 5)',
    fallback: false,
    defaultHelp: 'false',
  },
  {
    key: 'amqpUrl',
    flag: '--amqp-url',
    env: 'ZOOTT_AMQP_URL',
    kind: 'string',
    arg: 'url',
    help: 'RabbitMQ: amqp://user:password@host:5672/vhost, or amqps:// for TLS (prefer ZOOTT_AMQP_URL or the config file: it holds a password)',
    fallback: 'amqp://guest:guest@127.0.0.1:5672',
    defaultHelp: 'amqp://guest:guest@127.0.0.1:5672',
    secret: true,
  },
  {
    key: 'amqpCa',
    flag: '--amqp-ca',
    env: 'ZOOTT_AMQP_CA',
    kind: 'string',
    arg: 'pem-file',
    help: 'amqps: CA certificate(s) the broker is checked against (default: the system CAs)',
  },
  {
    key: 'amqpCert',
    flag: '--amqp-cert',
    env: 'ZOOTT_AMQP_CERT',
    kind: 'string',
    arg: 'pem-file',
    help: 'amqps: client certificate, for brokers that authenticate clients by certificate',
  },
  {
    key: 'amqpKey',
    flag: '--amqp-key',
    env: 'ZOOTT_AMQP_KEY',
    kind: 'string',
    arg: 'pem-file',
    help: 'amqps: the private key of --amqp-cert',
  },
  {
    key: 'jobQueue',
    flag: '--job-queue',
    env: 'ZOOTT_AMQP_JOB_QUEUE',
    kind: 'string',
    arg: 'queue',
    help: 'queue of regular jobs',
    fallback: 'jobs',
    defaultHelp: 'jobs',
  },
  {
    key: 'raceQueue',
    flag: '--race-queue',
    env: 'ZOOTT_AMQP_RACE_QUEUE',
    kind: 'string',
    arg: 'queue',
    help: 'queue of race jobs',
    fallback: 'races',
    defaultHelp: 'races',
  },
  {
    key: 'deadLetterExchange',
    flag: '--dead-letter-exchange',
    env: 'ZOOTT_AMQP_DEAD_LETTER_EXCHANGE',
    kind: 'string',
    arg: 'exchange',
    help: "exchange malformed messages are published to (with an x-zoott-error header); unset: they are rejected without requeue (the queue's own dead-letter exchange, if any, gets them)",
  },
  {
    key: 'prefetch',
    flag: '--prefetch',
    env: 'ZOOTT_AMQP_PREFETCH',
    kind: 'int',
    arg: 'n',
    unit: 'count',
    help: "unacknowledged messages per queue, per bridge (each consumer's RabbitMQ prefetch count: rabbitmqctl list_consumers queue_name prefetch_count shows it)",
    fallback: 16,
    defaultHelp: '16',
  },
  {
    key: 'declareQueues',
    flag: '--declare-queues',
    env: 'ZOOTT_AMQP_DECLARE_QUEUES',
    kind: 'bool',
    arg: '',
    help: 'declare missing queues as durable (false: they must exist, e.g. declared elsewhere with arguments of their own)',
    fallback: true,
    defaultHelp: 'true',
  },
  {
    key: 'replyExchanges',
    flag: '--reply-exchanges',
    env: 'ZOOTT_AMQP_REPLY_EXCHANGES',
    kind: 'list',
    arg: 'patterns',
    help: 'exchanges results may be published to, comma-separated patterns (* any characters, ? one, "" the default exchange); a job naming another is refused. Unset: any exchange the bridge\'s RabbitMQ user may write to',
  },
  {
    key: 'maxDeliveries',
    flag: '--max-deliveries',
    env: 'ZOOTT_AMQP_MAX_DELIVERIES',
    kind: 'int',
    arg: 'n',
    unit: 'count',
    help: 'deliveries of one message (x-delivery-count on a quorum queue, else counted by the bridge) after which it is refused rather than tried again',
    fallback: 5,
    defaultHelp: '5',
  },
  {
    key: 'parkAfterMs',
    flag: '--park-after',
    env: 'ZOOTT_AMQP_PARK_AFTER_MS',
    kind: 'int',
    arg: 'ms',
    unit: 'ms',
    help: 'how long a result the broker refuses (no such exchange, not allowed, no queue bound) is retried, with backoff, before it is parked (zoott parked lists, retries and drops parked results)',
    fallback: 60_000,
    defaultHelp: '60000',
  },
  {
    ...LOG_LEVEL_SETTING,
    fallback: 'info',
    defaultHelp: 'info',
  },
  {
    ...TRACE_SETTING,
    help: `${TRACE_SETTING.help}; a message's W3C traceparent header makes its task continue the publisher's trace`,
    fallback: false,
    defaultHelp: 'false',
  },
];

/** Environment variable naming the bridge's config file. */
export const BRIDGE_CONFIG_ENV = 'ZOOTT_AMQP_BRIDGE_CONFIG';

/**
 * How the bridge reads values where it differs from zoott-worker: counts and timeouts start at 1
 * (a prefetch of 0 would mean unlimited to RabbitMQ), and errors do not quote rejected text.
 */
export const BRIDGE_VALUE_RULES: ValueRules = { minInt: 1, quoteRejected: false };

/** How the bridge reports bad credentials: the OS message, and an empty auth file adds none. */
export const BRIDGE_CREDENTIAL_RULES: CredentialRules = {
  quoteRejected: false,
  readError: 'message',
  refuseEmptyFile: false,
};

const BRIDGE_CONFIG_TRUST: TrustRule = { kind: 'config file', field: 'config' };

/**
 * Reads a config file (YAML or JSON; one mapping of settings, keyed like the table), if it may
 * be trusted as zoott's own are: owned by the user running the bridge or root, writable by
 * nobody else, and, when it sets a secret (the AMQP URL's password, ZooKeeper's auth), readable
 * by nobody else. Whoever may change it chooses where the bridge sends its credentials.
 */
export function readBridgeConfig(path: string): Record<string, unknown> {
  if (!existsSync(path)) throw settingError(path, 'the config file does not exist', 'config');
  let read: ReturnType<typeof readTrusted>;
  try {
    read = readTrusted(path, BRIDGE_CONFIG_TRUST);
  } catch (err) {
    if (err instanceof ZoottError) throw err;
    throw settingError(path, `cannot be read: ${(err as Error).message}`, 'config');
  }
  let doc: unknown;
  try {
    doc = parseYaml(read.text);
  } catch (err) {
    throw settingError(path, `does not parse: ${(err as Error).message}`, 'config');
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw settingError(path, 'must hold a mapping of settings', 'config');
  const settings = doc as Record<string, unknown>;
  if (BRIDGE_SETTINGS.some((spec) => spec.secret && settings[spec.key] !== undefined))
    checkPrivate(path, read.stat, BRIDGE_CONFIG_TRUST);
  return settings;
}

/** Resolved settings with the source of each. */
export interface ResolvedBridgeSettings {
  settings: Required<
    Pick<
      BridgeSettings,
      | 'connect'
      | 'world'
      | 'amqpUrl'
      | 'jobQueue'
      | 'raceQueue'
      | 'prefetch'
      | 'declareQueues'
      | 'createWorld'
      | 'maxDeliveries'
      | 'parkAfterMs'
      | 'logLevel'
      | 'sessionTimeoutMs'
    >
  > &
    BridgeSettings;
  sources: Partial<Record<keyof BridgeSettings, SettingSource>>;
}

/**
 * Merges flags, environment and config file (in that order of precedence) and fills in the
 * defaults. Unknown file keys and bad values are errors naming the setting and its source.
 *
 * @throws ZoottError INVALID_CONFIG
 */
export function resolveBridgeSettings(input: {
  flags: Partial<Record<keyof BridgeSettings, unknown>>;
  env: Readonly<Record<string, string | undefined>>;
  file: Record<string, unknown>;
  fileName?: string;
}): ResolvedBridgeSettings {
  const { values, sources } = mergeSettingSources(BRIDGE_SETTINGS, input, BRIDGE_VALUE_RULES);
  const out: Record<string, unknown> = values;
  for (const spec of BRIDGE_SETTINGS)
    if (out[spec.key] === undefined && spec.fallback !== undefined) {
      out[spec.key] = spec.fallback;
      sources[spec.key] = 'default';
    }
  checkLogLevel(out.logLevel as string, BRIDGE_VALUE_RULES);
  const url = out.amqpUrl as string;
  if (!/^amqps?:\/\//.test(url))
    throw settingError(
      sourceName('amqpUrl', sources),
      'must start with amqp:// or amqps://',
      'amqpUrl',
    );
  return { settings: out as unknown as ResolvedBridgeSettings['settings'], sources };
}

/** Where a setting came from, as its error names it: the flag, the variable or the file key. */
export function sourceName(
  key: keyof BridgeSettings,
  sources: ResolvedBridgeSettings['sources'],
): string {
  const spec = BRIDGE_SETTINGS.find((s) => s.key === key)!;
  return sources[key] === 'flag' ? spec.flag : sources[key] === 'env' ? spec.env : key;
}

/** A setting's value as --print-config shows it: never a password. */
export function shownValue(spec: BridgeSettingSpec, value: unknown): unknown {
  if (!spec.secret || value === undefined) return value ?? null;
  if (spec.key === 'amqpUrl' && typeof value === 'string') {
    try {
      const url = new URL(value);
      if (url.password) url.password = '****';
      return url.toString();
    } catch {
      return '****';
    }
  }
  if (Array.isArray(value)) return value.map((v) => maskCredential(String(v)));
  return '****';
}
