import { readFileSync } from 'node:fs';
import { ZoottError } from '@zoott/core';
import { checkOutputCap } from './limits.js';

/** Value kinds of settings. */
type Kind = 'string' | 'int' | 'list';

/** One setting of the daemon: its flag, environment variable and config-file key. */
export interface SettingSpec {
  key: keyof FileSettings;
  flag: string;
  env: string;
  kind: Kind;
  /** Placeholder shown in --help. */
  arg: string;
  help: string;
  default?: string;
}

/**
 * Every setting, in --help order. Precedence: flag, then environment, then config file,
 * then the default. Lists are comma-separated in flags and environment (a flag may also
 * be repeated) and JSON arrays in the file.
 */
export const SETTINGS: readonly SettingSpec[] = [
  {
    key: 'connect',
    flag: '--connect',
    env: 'ZOOTT_CONNECT',
    kind: 'string',
    arg: 'hosts[/chroot]',
    help: 'ZooKeeper connection string, with an optional chroot (one namespace per application)',
    default: '127.0.0.1:2181',
  },
  {
    key: 'auth',
    flag: '--auth',
    env: 'ZOOTT_AUTH',
    kind: 'list',
    arg: 'scheme:credentials',
    help: 'credentials added to the session, e.g. digest:user:password',
  },
  {
    key: 'acl',
    flag: '--acl',
    env: 'ZOOTT_ACL',
    kind: 'list',
    arg: 'user:password:perms',
    help: 'ACL of every node the worker creates: digest entries user:password:cdrwa, or "open"; default: the --auth identity (ZooKeeper\'s auth scheme) when --auth is given, else open',
  },
  {
    key: 'sessionTimeoutMs',
    flag: '--session-timeout',
    env: 'ZOOTT_SESSION_TIMEOUT_MS',
    kind: 'int',
    arg: 'ms',
    help: 'ZooKeeper session timeout',
    default: '10000',
  },
  {
    key: 'world',
    flag: '--world',
    env: 'ZOOTT_WORLD',
    kind: 'string',
    arg: 'name',
    help: 'the task world to serve (/zoott_<world>)',
    default: 'default',
  },
  {
    key: 'types',
    flag: '--types',
    env: 'ZOOTT_TYPES',
    kind: 'list',
    arg: 'type,...',
    help: 'task types to serve (default: every type it has a handler for)',
  },
  {
    key: 'concurrency',
    flag: '--concurrency',
    env: 'ZOOTT_CONCURRENCY',
    kind: 'int',
    arg: 'n',
    help: 'tasks run at once',
    default: '1',
  },
  {
    key: 'raceConcurrency',
    flag: '--race-concurrency',
    env: 'ZOOTT_RACE_CONCURRENCY',
    kind: 'int',
    arg: 'n',
    help: 'race coordinators run at once (they wait, they run no process)',
    default: '4',
  },
  {
    key: 'nodeId',
    flag: '--node-id',
    env: 'ZOOTT_NODE_ID',
    kind: 'string',
    arg: 'id',
    help: "this worker's identity; jobs hinted with server=<id> prefer it",
    default: 'the host name',
  },
  {
    key: 'handlers',
    flag: '--handlers',
    env: 'ZOOTT_HANDLERS',
    kind: 'string',
    arg: 'module',
    help: 'ES module exporting one function per task type (named exports, or a default object)',
  },
  {
    key: 'dataDir',
    flag: '--data-dir',
    env: 'ZOOTT_DATA_DIR',
    kind: 'string',
    arg: 'dir',
    help: 'files held locally: `filename` hints and race input directories are relative to it',
    default: 'the working directory',
  },
  {
    key: 'workDir',
    flag: '--work-dir',
    env: 'ZOOTT_WORK_DIR',
    kind: 'string',
    arg: 'dir',
    help: 'working directory of job processes',
    default: 'the current directory',
  },
  {
    key: 'allowExec',
    flag: '--allow-exec',
    env: 'ZOOTT_ALLOW_EXEC',
    kind: 'list',
    arg: 'path|glob,...',
    help: 'executables jobs may run (absolute paths or globs: * within a segment, ** across); none = job types are not served',
  },
  {
    key: 'runAs',
    flag: '--run-as',
    env: 'ZOOTT_RUN_AS',
    kind: 'string',
    arg: 'user',
    help: "run job processes as this user (its uid, gid and groups, HOME its home); required for a root worker serving job types, since a job can read its own user's processes, the worker's credentials included (--run-as root: run them as root anyway)",
  },
  {
    key: 'passEnv',
    flag: '--pass-env',
    env: 'ZOOTT_PASS_ENV',
    kind: 'list',
    arg: 'VAR,...',
    help: 'environment variables passed to jobs besides PATH, HOME, LANG, LC_ALL, TZ, TMPDIR',
  },
  {
    key: 'jobTimeoutMs',
    flag: '--job-timeout',
    env: 'ZOOTT_JOB_TIMEOUT_MS',
    kind: 'int',
    arg: 'ms',
    help: "ceiling on a job's run time (a job's timeoutMs may only lower it)",
    default: '3600000',
  },
  {
    key: 'killGraceMs',
    flag: '--kill-grace',
    env: 'ZOOTT_KILL_GRACE_MS',
    kind: 'int',
    arg: 'ms',
    help: 'time between SIGTERM and SIGKILL when a job is stopped',
    default: '5000',
  },
  {
    key: 'maxOutputBytes',
    flag: '--max-output',
    env: 'ZOOTT_MAX_OUTPUT_BYTES',
    kind: 'int',
    arg: 'bytes',
    help: 'stdout and stderr bytes kept per job (the result JSON is capped at this too)',
    default: '262144',
  },
  {
    key: 'graceMs',
    flag: '--grace',
    env: 'ZOOTT_GRACE_MS',
    kind: 'int',
    arg: 'ms',
    help: 'on SIGTERM/SIGINT: how long running tasks may finish before they are aborted',
    default: '30000',
  },
  {
    key: 'localityWaitMs',
    flag: '--locality-wait',
    env: 'ZOOTT_LOCALITY_WAIT_MS',
    kind: 'int',
    arg: 'ms',
    help: 'how long a task hinted to another live worker waits before this one takes it',
    default: '2000',
  },
  {
    key: 'metricsPort',
    flag: '--metrics-port',
    env: 'ZOOTT_METRICS_PORT',
    kind: 'int',
    arg: 'port',
    help: 'serve Prometheus metrics on this port (0 = any free port; unset = off)',
  },
  {
    key: 'metricsHost',
    flag: '--metrics-host',
    env: 'ZOOTT_METRICS_HOST',
    kind: 'string',
    arg: 'address',
    help: 'address the metrics endpoint binds',
    default: '127.0.0.1',
  },
  {
    key: 'logLevel',
    flag: '--log-level',
    env: 'ZOOTT_LOG_LEVEL',
    kind: 'string',
    arg: 'level',
    help: 'trace, debug, info, warn, error, fatal or silent',
    default: 'info',
  },
];

/** The settings as read from flags, environment and a config file. */
export interface FileSettings {
  connect?: string;
  auth?: string[];
  acl?: string[];
  sessionTimeoutMs?: number;
  world?: string;
  types?: string[];
  concurrency?: number;
  raceConcurrency?: number;
  nodeId?: string;
  handlers?: string;
  dataDir?: string;
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

/** Variable naming the config file, and the flag. */
export const CONFIG_ENV = 'ZOOTT_WORKER_CONFIG';

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

/**
 * Merges flags (already parsed, keyed like the file), environment and config file into
 * one settings object. Unknown file keys are errors, so a misspelt key is caught.
 *
 * @throws ZoottError INVALID_CONFIG naming the setting and where it came from.
 */
export function resolveSettings(sources: {
  flags?: Partial<Record<keyof FileSettings, unknown>>;
  env?: Readonly<Record<string, string | undefined>>;
  file?: unknown;
  fileName?: string;
}): FileSettings {
  const file = sources.file ?? {};
  const fileName = sources.fileName ?? 'config file';
  if (typeof file !== 'object' || file === null || Array.isArray(file))
    throw bad(fileName, 'must hold a JSON object', 'config');
  const known = new Set(SETTINGS.map((s) => s.key as string));
  for (const key of Object.keys(file))
    if (!known.has(key))
      throw bad(`${fileName}: ${key}`, `unknown setting (known: ${[...known].join(', ')})`, key);
  const out: Record<string, unknown> = {};
  for (const spec of SETTINGS) {
    const flag = sources.flags?.[spec.key];
    const env = sources.env?.[spec.env];
    const fromFile = (file as Record<string, unknown>)[spec.key];
    let value: unknown;
    if (flag !== undefined) value = readValue(spec, flag, spec.flag);
    else if (env !== undefined && env !== '') value = readValue(spec, env, spec.env);
    else if (fromFile !== undefined) value = readValue(spec, fromFile, `${fileName}: ${spec.key}`);
    else continue;
    out[spec.key] = value;
  }
  const settings = out as FileSettings;
  if (settings.logLevel !== undefined && !LOG_LEVELS.includes(settings.logLevel))
    throw bad(
      'logLevel',
      `must be one of ${LOG_LEVELS.join(', ')}, got ${settings.logLevel}`,
      'logLevel',
    );
  checkOutputCap(settings.maxOutputBytes, 'maxOutputBytes (--max-output)');
  return settings;
}

/** Reads a JSON config file. @throws ZoottError INVALID_CONFIG when unreadable or not JSON. */
export function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw bad(path, `cannot read the config file (${(err as Error).message})`, 'config');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw bad(path, `is not valid JSON (${(err as Error).message})`, 'config');
  }
}
