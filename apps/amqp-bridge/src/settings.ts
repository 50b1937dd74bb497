import { existsSync, readFileSync } from 'node:fs';
import { ZoottError } from '@zoott/core';
import { parse as parseYaml } from 'yaml';

/** Value kinds of settings. */
type Kind = 'string' | 'int' | 'list' | 'bool';

/** One setting: its flag, environment variable and config-file key. */
export interface BridgeSettingSpec {
  key: keyof BridgeSettings;
  flag: string;
  env: string;
  kind: Kind;
  arg: string;
  help: string;
  fallback?: unknown;
  /** Printed masked by --print-config. */
  secret?: boolean;
}

/** The bridge's settings as flags, environment and config file give them. */
export interface BridgeSettings {
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
  logLevel?: string;
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
    key: 'sessionTimeoutMs',
    flag: '--session-timeout',
    env: 'ZOOTT_SESSION_TIMEOUT_MS',
    kind: 'int',
    arg: 'ms',
    help: 'ZooKeeper session timeout',
    fallback: 10_000,
  },
  {
    key: 'world',
    flag: '--world',
    env: 'ZOOTT_WORLD',
    kind: 'string',
    arg: 'name',
    help: 'the world jobs are queued into (its workers run them)',
    fallback: 'default',
  },
  {
    key: 'amqpUrl',
    flag: '--amqp-url',
    env: 'ZOOTT_AMQP_URL',
    kind: 'string',
    arg: 'url',
    help: 'RabbitMQ: amqp://user:password@host:5672/vhost, or amqps:// for TLS (prefer ZOOTT_AMQP_URL or the config file: it holds a password)',
    fallback: 'amqp://guest:guest@127.0.0.1:5672',
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
  },
  {
    key: 'raceQueue',
    flag: '--race-queue',
    env: 'ZOOTT_AMQP_RACE_QUEUE',
    kind: 'string',
    arg: 'queue',
    help: 'queue of race jobs',
    fallback: 'races',
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
    help: 'unacknowledged messages per queue',
    fallback: 16,
  },
  {
    key: 'declareQueues',
    flag: '--declare-queues',
    env: 'ZOOTT_AMQP_DECLARE_QUEUES',
    kind: 'bool',
    arg: '',
    help: 'declare missing queues as durable (false: they must exist)',
    fallback: true,
  },
  {
    key: 'logLevel',
    flag: '--log-level',
    env: 'ZOOTT_LOG_LEVEL',
    kind: 'string',
    arg: 'level',
    help: 'trace, debug, info, warn, error, fatal or silent',
    fallback: 'info',
  },
];

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Environment variable naming the bridge's config file. */
export const BRIDGE_CONFIG_ENV = 'ZOOTT_AMQP_BRIDGE_CONFIG';

function bad(where: string, why: string, field: string): ZoottError {
  return new ZoottError('INVALID_CONFIG', `${where}: ${why}`, { field });
}

function readValue(spec: BridgeSettingSpec, value: unknown, where: string): unknown {
  switch (spec.kind) {
    case 'string':
      if (typeof value !== 'string' || value === '')
        throw bad(where, 'must be a non-empty string', spec.key);
      return value;
    case 'int': {
      const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 1)
        throw bad(where, `must be a whole number >= 1, got ${JSON.stringify(value)}`, spec.key);
      return n;
    }
    case 'bool': {
      if (typeof value === 'boolean') return value;
      const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
      if (['true', '1', 'yes'].includes(text)) return true;
      if (['false', '0', 'no'].includes(text)) return false;
      throw bad(where, `must be true or false, got ${JSON.stringify(value)}`, spec.key);
    }
    case 'list': {
      const items = Array.isArray(value)
        ? value
        : typeof value === 'string'
          ? value.split(',')
          : null;
      if (items === null || items.some((s) => typeof s !== 'string'))
        throw bad(where, 'must be a list of strings', spec.key);
      return (items as string[]).map((s) => s.trim()).filter((s) => s !== '');
    }
  }
}

/** Reads a config file (YAML or JSON; one mapping of settings, keyed like the table). */
export function readBridgeConfig(path: string): Record<string, unknown> {
  if (!existsSync(path)) throw bad(path, 'the config file does not exist', 'config');
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw bad(path, `does not parse: ${(err as Error).message}`, 'config');
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw bad(path, 'must hold a mapping of settings', 'config');
  return doc as Record<string, unknown>;
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
      | 'logLevel'
      | 'sessionTimeoutMs'
    >
  > &
    BridgeSettings;
  sources: Record<string, 'flag' | 'env' | 'file' | 'default'>;
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
  const known = new Set<string>(BRIDGE_SETTINGS.map((s) => s.key));
  const fileName = input.fileName ?? 'config file';
  for (const key of Object.keys(input.file))
    if (!known.has(key))
      throw bad(`${fileName}: ${key}`, `unknown setting (known: ${[...known].join(', ')})`, key);
  const out: Record<string, unknown> = {};
  const sources: Record<string, 'flag' | 'env' | 'file' | 'default'> = {};
  for (const spec of BRIDGE_SETTINGS) {
    const flag = input.flags[spec.key];
    const env = input.env[spec.env];
    const file = input.file[spec.key];
    if (flag !== undefined) {
      out[spec.key] = readValue(spec, flag, spec.flag);
      sources[spec.key] = 'flag';
    } else if (env !== undefined && env !== '') {
      out[spec.key] = readValue(spec, env, spec.env);
      sources[spec.key] = 'env';
    } else if (file !== undefined && file !== null) {
      out[spec.key] = readValue(spec, file, `${fileName}: ${spec.key}`);
      sources[spec.key] = 'file';
    } else if (spec.fallback !== undefined) {
      out[spec.key] = spec.fallback;
      sources[spec.key] = 'default';
    }
  }
  if (!LOG_LEVELS.includes(out.logLevel as string))
    throw bad('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`, 'logLevel');
  const url = out.amqpUrl as string;
  if (!/^amqps?:\/\//.test(url))
    throw bad(sourceName('amqpUrl', sources), 'must start with amqp:// or amqps://', 'amqpUrl');
  return { settings: out as unknown as ResolvedBridgeSettings['settings'], sources };
}

function sourceName(key: string, sources: Record<string, string>): string {
  const spec = BRIDGE_SETTINGS.find((s) => s.key === key)!;
  return sources[key] === 'flag' ? spec.flag : sources[key] === 'env' ? spec.env : key;
}

/** A setting's value as --print-config shows it: never a password. */
export function shownValue(spec: BridgeSettingSpec, value: unknown): unknown {
  if (!spec.secret || value === undefined) return value ?? null;
  if (spec.key === 'amqpUrl' && typeof value === 'string') {
    try {
      const u = new URL(value);
      if (u.password) u.password = '****';
      return u.toString();
    } catch {
      return '****';
    }
  }
  if (Array.isArray(value))
    return value.map((v) => {
      const text = String(v);
      const lead = text.startsWith('digest:') ? 'digest:' : '';
      return `${lead}${text.slice(lead.length).split(':')[0]}:****`;
    });
  return '****';
}
