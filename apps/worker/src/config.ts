import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { checkDatasets, ZoottError } from '@zoott/core';
import {
  CLI_FILE_KEYS,
  CONFIG_FILE_ENV,
  type FoundConfig,
  findConfigFile,
  maskAclEntry,
  maskCredential,
  readConfigDocument,
  settingsFor,
  type Tool,
} from './config-file.js';
import { checkOutputCap } from './limits.js';

export * from './config-file.js';

/** Value kinds of settings. */
type Kind = 'string' | 'int' | 'list' | 'bool';

/** One setting of the daemon: its flag, environment variable and config-file key. */
export interface SettingSpec {
  key: keyof FileSettings;
  flag: string;
  env: string;
  kind: Kind;
  /** Placeholder shown in --help ('' for a switch). */
  arg: string;
  help: string;
  /** The default as --help and the README say it. */
  defaultHelp?: string;
  /** The value used when no source sets one, given what the sources did set; none = unset. */
  fallback?: (resolved: FileSettings) => unknown;
  /** A valid value in flag/environment form: documentation, and what the settings test sets. */
  example: string;
}

/**
 * Every setting, in --help order: the one table that drives flag parsing, environment
 * variables, config-file keys, --print-config and the README table. Precedence: flag, then
 * environment, then config file, then the default. Lists are comma-separated in flags and
 * environment (a flag may also be repeated) and arrays (or comma-separated strings) in the
 * file; switches take true/false/1/0 in environment and file.
 */
export const SETTINGS: readonly SettingSpec[] = [
  {
    key: 'connect',
    flag: '--connect',
    env: 'ZOOTT_CONNECT',
    kind: 'string',
    arg: 'hosts[/chroot]',
    help: 'ZooKeeper connection string, with an optional chroot (one namespace per application)',
    defaultHelp: '127.0.0.1:2181',
    example: 'zk1:2181,zk2:2181/myapp',
    fallback: () => '127.0.0.1:2181',
  },
  {
    key: 'auth',
    flag: '--auth',
    env: 'ZOOTT_AUTH',
    kind: 'list',
    arg: 'user:password',
    help: 'credentials added to the session: user:password or digest:user:password (prefer --auth-file or ZOOTT_AUTH: a command line is readable by every local user)',
    example: 'alice:secret',
  },
  {
    key: 'authFile',
    flag: '--auth-file',
    env: 'ZOOTT_AUTH_FILE',
    kind: 'string',
    arg: 'path',
    help: 'file of credentials, one user:password (or digest:user:password) a line; keeps them off the command line',
    example: '/etc/zoott/auth',
  },
  {
    key: 'acl',
    flag: '--acl',
    env: 'ZOOTT_ACL',
    kind: 'list',
    arg: 'user:password:perms',
    help: 'ACL of every node the worker creates: digest entries user:password:cdrwa, or "open"; default: the identity of the credentials (ZooKeeper\'s auth scheme) when any are given, else open',
    example: 'alice:secret:cdrwa',
  },
  {
    key: 'sessionTimeoutMs',
    flag: '--session-timeout',
    env: 'ZOOTT_SESSION_TIMEOUT_MS',
    kind: 'int',
    arg: 'ms',
    help: 'ZooKeeper session timeout',
    defaultHelp: '10000',
    example: '15000',
    fallback: () => 10000,
  },
  {
    key: 'world',
    flag: '--world',
    env: 'ZOOTT_WORLD',
    kind: 'string',
    arg: 'name',
    help: 'the task world to serve (/zoott_<world>)',
    defaultHelp: 'default',
    example: 'jobs',
    fallback: () => 'default',
  },
  {
    key: 'createWorld',
    flag: '--create-world',
    env: 'ZOOTT_CREATE_WORLD',
    kind: 'bool',
    arg: '',
    help: 'create the world when it does not exist (without it a world that was never initialised is refused)',
    example: 'true',
    fallback: () => false,
  },
  {
    key: 'types',
    flag: '--types',
    env: 'ZOOTT_TYPES',
    kind: 'list',
    arg: 'type,...',
    help: 'task types to serve (default: every type it has a handler for)',
    example: 'zoott.job,resize',
  },
  {
    key: 'concurrency',
    flag: '--concurrency',
    env: 'ZOOTT_CONCURRENCY',
    kind: 'int',
    arg: 'n',
    help: 'tasks run at once',
    defaultHelp: '1',
    example: '4',
    fallback: () => 1,
  },
  {
    key: 'raceConcurrency',
    flag: '--race-concurrency',
    env: 'ZOOTT_RACE_CONCURRENCY',
    kind: 'int',
    arg: 'n',
    help: 'race coordinators run at once (they wait, they run no process)',
    defaultHelp: '4',
    example: '2',
    fallback: () => 4,
  },
  {
    key: 'nodeId',
    flag: '--node-id',
    env: 'ZOOTT_NODE_ID',
    kind: 'string',
    arg: 'id',
    help: "this worker's identity; jobs hinted with server=<id> prefer it",
    defaultHelp: 'the host name',
    example: 'node-b',
    fallback: () => hostname(),
  },
  {
    key: 'handlers',
    flag: '--handlers',
    env: 'ZOOTT_HANDLERS',
    kind: 'string',
    arg: 'module',
    help: 'ES module exporting one function per task type (named exports, or a default object)',
    example: './handlers.js',
  },
  {
    key: 'dataDir',
    flag: '--data-dir',
    env: 'ZOOTT_DATA_DIR',
    kind: 'string',
    arg: 'dir',
    help: 'files held locally: `filename` hints and race input directories are relative to it',
    defaultHelp: 'the working directory',
    example: '/srv/data',
    fallback: (s) => resolve(s.workDir ?? process.cwd()),
  },
  {
    key: 'datasets',
    flag: '--datasets',
    env: 'ZOOTT_DATASETS',
    kind: 'list',
    arg: 'name,...',
    help: 'datasets this worker caches: jobs with a matching `dataset` hint prefer it (listed in its registry node)',
    example: 'sales-2026,stock',
  },
  {
    key: 'workDir',
    flag: '--work-dir',
    env: 'ZOOTT_WORK_DIR',
    kind: 'string',
    arg: 'dir',
    help: 'working directory of job processes',
    defaultHelp: 'the current directory',
    example: '/srv/work',
    fallback: () => process.cwd(),
  },
  {
    key: 'allowExec',
    flag: '--allow-exec',
    env: 'ZOOTT_ALLOW_EXEC',
    kind: 'list',
    arg: 'path|glob,...',
    help: 'executables jobs may run (absolute paths or globs: * within a segment, ** across); none = job types are not served',
    example: '/usr/bin/*,/opt/tools/**',
  },
  {
    key: 'runAs',
    flag: '--run-as',
    env: 'ZOOTT_RUN_AS',
    kind: 'string',
    arg: 'user',
    example: 'nobody',
    help: "run job processes as this user (its uid, gid and groups, HOME its home); required for a root worker serving job types, since a job can read its own user's processes, the worker's credentials included (--run-as root: run them as root anyway)",
  },
  {
    key: 'passEnv',
    flag: '--pass-env',
    env: 'ZOOTT_PASS_ENV',
    kind: 'list',
    arg: 'VAR,...',
    help: 'environment variables passed to jobs besides PATH, HOME, LANG, LC_ALL, TZ, TMPDIR',
    example: 'AWS_REGION,LANG',
  },
  {
    key: 'jobTimeoutMs',
    flag: '--job-timeout',
    env: 'ZOOTT_JOB_TIMEOUT_MS',
    kind: 'int',
    arg: 'ms',
    help: "ceiling on a job's run time (a job's timeoutMs may only lower it)",
    defaultHelp: '3600000',
    example: '600000',
    fallback: () => 3_600_000,
  },
  {
    key: 'killGraceMs',
    flag: '--kill-grace',
    env: 'ZOOTT_KILL_GRACE_MS',
    kind: 'int',
    arg: 'ms',
    help: 'time between SIGTERM and SIGKILL when a job is stopped',
    defaultHelp: '5000',
    example: '2000',
    fallback: () => 5000,
  },
  {
    key: 'maxOutputBytes',
    flag: '--max-output',
    env: 'ZOOTT_MAX_OUTPUT_BYTES',
    kind: 'int',
    arg: 'bytes',
    help: 'stdout and stderr bytes kept per job (the result JSON is capped at this too)',
    defaultHelp: '262144',
    example: '65536',
    fallback: () => 256 * 1024,
  },
  {
    key: 'graceMs',
    flag: '--grace',
    env: 'ZOOTT_GRACE_MS',
    kind: 'int',
    arg: 'ms',
    help: 'on SIGTERM/SIGINT: how long running tasks may finish before they are aborted',
    defaultHelp: '30000',
    example: '5000',
    fallback: () => 30_000,
  },
  {
    key: 'localityWaitMs',
    flag: '--locality-wait',
    env: 'ZOOTT_LOCALITY_WAIT_MS',
    kind: 'int',
    arg: 'ms',
    help: 'how long a task hinted to another live worker waits before this one takes it',
    defaultHelp: '2000',
    example: '500',
    fallback: () => 2000,
  },
  {
    key: 'metricsPort',
    flag: '--metrics-port',
    env: 'ZOOTT_METRICS_PORT',
    kind: 'int',
    arg: 'port',
    help: 'serve Prometheus metrics on this port (0 = any free port; unset = off)',
    example: '9464',
  },
  {
    key: 'metricsHost',
    flag: '--metrics-host',
    env: 'ZOOTT_METRICS_HOST',
    kind: 'string',
    arg: 'address',
    help: 'address the metrics endpoint binds',
    defaultHelp: '127.0.0.1',
    example: '0.0.0.0',
    fallback: () => '127.0.0.1',
  },
  {
    key: 'logLevel',
    flag: '--log-level',
    env: 'ZOOTT_LOG_LEVEL',
    kind: 'string',
    arg: 'level',
    help: 'trace, debug, info, warn, error, fatal or silent',
    defaultHelp: 'info',
    example: 'warn',
    fallback: () => 'info',
  },
];

/** The settings as read from flags, environment and a config file. */
export interface FileSettings {
  connect?: string;
  auth?: string[];
  authFile?: string;
  acl?: string[];
  sessionTimeoutMs?: number;
  world?: string;
  createWorld?: boolean;
  types?: string[];
  concurrency?: number;
  raceConcurrency?: number;
  nodeId?: string;
  handlers?: string;
  dataDir?: string;
  datasets?: string[];
  workDir?: string;
  allowExec?: string[];
  runAs?: string;
  passEnv?: string[];
  jobTimeoutMs?: number;
  killGraceMs?: number;
  maxOutputBytes?: number;
  graceMs?: number;
  localityWaitMs?: number;
  metricsPort?: number;
  metricsHost?: string;
  logLevel?: string;
}

/**
 * Variables naming the worker's config file, in the order they are read: a worker-only one,
 * then the one the CLI reads too (so one exported variable serves both tools).
 */
export const CONFIG_ENVS: readonly string[] = ['ZOOTT_WORKER_CONFIG', CONFIG_FILE_ENV];

/** Config-file keys of each tool (the worker's are its settings table). */
export const FILE_KEYS: Readonly<Record<Tool, readonly string[]>> = {
  cli: CLI_FILE_KEYS,
  worker: SETTINGS.map((s) => s.key),
};

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function bad(where: string, why: string, field: string): ZoottError {
  return new ZoottError('INVALID_CONFIG', `${where}: ${why}`, { field });
}

function readValue(spec: SettingSpec, value: unknown, where: string): unknown {
  switch (spec.kind) {
    case 'string':
      if (typeof value !== 'string' || value === '')
        throw bad(where, `must be a non-empty string, got ${JSON.stringify(value)}`, spec.key);
      return value;
    case 'int': {
      const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
        throw bad(where, `must be a whole number >= 0, got ${JSON.stringify(value)}`, spec.key);
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
        throw bad(where, `must be a list of strings, got ${JSON.stringify(value)}`, spec.key);
      return (items as string[]).map((s) => s.trim()).filter((s) => s !== '');
    }
  }
}

/** Where a setting's value came from. */
export type SettingSource = 'flag' | 'env' | 'file' | 'default';

/** Settings with the source of each one that is set. */
export interface ResolvedSettings {
  settings: FileSettings;
  sources: Partial<Record<keyof FileSettings, SettingSource>>;
}

/** The inputs of {@link resolveSettings}. */
export interface SettingSources {
  /** Flags, keyed like the table (`jobTimeoutMs`, not commander's `jobTimeout`). */
  flags?: Partial<Record<keyof FileSettings, unknown>>;
  env?: Readonly<Record<string, string | undefined>>;
  /** The worker's part of the config file (see {@link readWorkerConfig}), or a plain object. */
  file?: unknown;
  fileName?: string;
}

/**
 * Merges flags, environment and config file into one settings object, recording where each
 * value came from. Unknown file keys are errors, so a misspelt key is caught.
 *
 * @throws ZoottError INVALID_CONFIG naming the setting and where it came from.
 */
export function resolveSettingsWithSources(sources: SettingSources): ResolvedSettings {
  const file = sources.file ?? {};
  const fileName = sources.fileName ?? 'config file';
  if (typeof file !== 'object' || file === null || Array.isArray(file))
    throw bad(fileName, 'must hold a mapping of settings', 'config');
  const known = new Set(SETTINGS.map((s) => s.key as string));
  for (const key of Object.keys(file))
    if (!known.has(key))
      throw bad(`${fileName}: ${key}`, `unknown setting (known: ${[...known].join(', ')})`, key);
  const out: Record<string, unknown> = {};
  const from: Partial<Record<keyof FileSettings, SettingSource>> = {};
  for (const spec of SETTINGS) {
    const flag = sources.flags?.[spec.key];
    const env = sources.env?.[spec.env];
    const fromFile = (file as Record<string, unknown>)[spec.key];
    if (flag !== undefined) {
      out[spec.key] = readValue(spec, flag, spec.flag);
      from[spec.key] = 'flag';
    } else if (env !== undefined && env !== '') {
      out[spec.key] = readValue(spec, env, spec.env);
      from[spec.key] = 'env';
    } else if (fromFile !== undefined && fromFile !== null) {
      out[spec.key] = readValue(spec, fromFile, `${fileName}: ${spec.key}`);
      from[spec.key] = 'file';
    }
  }
  const settings = out as FileSettings;
  if (settings.logLevel !== undefined && !LOG_LEVELS.includes(settings.logLevel))
    throw bad(
      'logLevel',
      `must be one of ${LOG_LEVELS.join(', ')}, got ${settings.logLevel}`,
      'logLevel',
    );
  checkOutputCap(settings.maxOutputBytes, 'maxOutputBytes (--max-output)');
  if (settings.datasets !== undefined) {
    const where = { flag: '--datasets', env: 'ZOOTT_DATASETS', file: `${fileName}: datasets` };
    try {
      checkDatasets(settings.datasets);
    } catch (err) {
      const why = (err as Error).message.replace(/^INVALID_CONFIG: datasets: /, '');
      throw bad(where[from.datasets as 'flag' | 'env' | 'file'], why, 'datasets');
    }
  }
  return { settings, sources: from };
}

/** {@link resolveSettingsWithSources} without the sources. */
export function resolveSettings(sources: SettingSources): FileSettings {
  return resolveSettingsWithSources(sources).settings;
}

/**
 * The worker's part of a config file (YAML or JSON): the top-level keys it knows and its
 * `worker:` section, after checking that every key belongs to the worker or the CLI.
 */
export function workerPartOf(
  doc: Record<string, unknown>,
  source: string,
): Record<string, unknown> {
  return settingsFor(doc, 'worker', FILE_KEYS, source);
}

/**
 * Finds and reads the worker's config file: `--config`, else `ZOOTT_WORKER_CONFIG`, else
 * `ZOOTT_CONFIG`, else the CLI's default paths (`./zoott.config.yaml`, ...).
 */
export function readWorkerConfig(options: {
  explicit: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}): { found: FoundConfig | null; file: Record<string, unknown> } {
  const found = findConfigFile({ ...options, envNames: CONFIG_ENVS });
  if (!found) return { found: null, file: {} };
  return { found, file: workerPartOf(readConfigDocument(found.path), found.path) };
}

/** Reads a config file (YAML or JSON) and returns the worker's part of it. */
export function readConfigFile(path: string): Record<string, unknown> {
  return workerPartOf(readConfigDocument(path), path);
}

/** One line of --print-config. */
export interface PrintedSetting {
  key: string;
  flag: string;
  env: string;
  /** The effective value (`null` when unset); credentials and ACL passwords masked. */
  value: unknown;
  source: SettingSource;
}

/** A value as --print-config shows it: never a password. */
function shown(key: keyof FileSettings, value: unknown): unknown {
  if (key === 'auth' && Array.isArray(value)) return value.map((v) => maskCredential(String(v)));
  if (key === 'acl' && Array.isArray(value)) return value.map((v) => maskAclEntry(String(v)));
  return value;
}

/** The effective settings, defaults filled in, with their sources: what --print-config shows. */
export function describeSettings(resolved: ResolvedSettings): PrintedSetting[] {
  return SETTINGS.map((spec) => {
    const source = resolved.sources[spec.key] ?? 'default';
    const set = resolved.settings[spec.key];
    const value = set !== undefined ? set : (spec.fallback?.(resolved.settings) ?? null);
    return { key: spec.key, flag: spec.flag, env: spec.env, value: shown(spec.key, value), source };
  });
}

/** The default of a setting that has one, as the daemon uses it. */
export function settingDefault<K extends keyof FileSettings>(
  key: K,
  resolved: FileSettings = {},
): NonNullable<FileSettings[K]> {
  const value = SETTINGS.find((s) => s.key === key)?.fallback?.(resolved);
  // A programming error, not a user's: only settings with a default are asked for.
  if (value === undefined || value === null) throw new Error(`setting ${key} has no default`);
  return value as NonNullable<FileSettings[K]>;
}
