// The daemon's settings table: every setting with its flag, environment variable, config-file
// key, help and default. Reading and resolving them is config.ts.

import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { DEFAULT_ENTRY_EVENTS, ENTRY_EVENTS_MODES, type EntryEventsMode } from './entry-events.js';
import { DEFAULT_HEAP_ROOM } from './heap-room.js';
import { JOB_CGROUP_MODES, type JobCgroupMode } from './jobs/cgroup-mode.js';
import type { SettingSpecBase } from './setting-values.js';
import { LOG_LEVEL_SETTING, SESSION_TIMEOUT_SETTING, TRACE_SETTING } from './shared-settings.js';
import { ZK_SECURITY_SETTINGS, type ZkSecuritySettings } from './zk-security.js';

/** One setting of the daemon: its flag, environment variable and config-file key. */
export interface SettingSpec extends SettingSpecBase<keyof FileSettings> {
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
    help: 'ACL of every node the worker creates: entries user:password:cdrwa (digest), x509:<certificate subject>:cdrwa, sasl:<user>:cdrwa, or "open"; default: the identities of the credentials, the SASL login and the client certificate (ZooKeeper\'s auth scheme) when any are given, else open',
    example: 'alice:secret:cdrwa',
  },
  {
    ...SESSION_TIMEOUT_SETTING,
    defaultHelp: '10000',
    example: '15000',
    fallback: () => 10000,
  },
  // TLS and SASL to a secured ZooKeeper, shared with the CLI and zoott-amqp-bridge.
  ...ZK_SECURITY_SETTINGS,
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
    unit: 'count',
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
    unit: 'count',
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
    key: 'jobCgroup',
    flag: '--job-cgroup',
    env: 'ZOOTT_JOB_CGROUP',
    kind: 'string',
    arg: 'mode',
    values: JOB_CGROUP_MODES,
    help: 'a cgroup v2 of its own for each job process, so everything it starts ends with it (a setsid descendant too): auto = where the worker may make one (root, or a delegated cgroup), else process groups; require = refuse to start without; off = process groups only',
    defaultHelp: 'auto',
    example: 'off',
    fallback: () => 'auto',
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
    unit: 'ms',
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
    unit: 'ms',
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
    unit: 'bytes',
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
    unit: 'ms',
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
    unit: 'ms',
    help: 'how long a task hinted to another live worker waits before this one takes it',
    defaultHelp: '2000',
    example: '500',
    fallback: () => 2000,
  },
  {
    key: 'entryEvents',
    flag: '--entry-events',
    env: 'ZOOTT_ENTRY_EVENTS',
    kind: 'string',
    arg: 'mode',
    values: ENTRY_EVENTS_MODES,
    help: 'tree watches (ZooKeeper 3.6+ persistent recursive) naming each task queued in an owned bucket: small = on owned buckets with small listings, all = on every owned bucket, children = on every owned bucket once it claims a task whose children are queued, off = none (children watches only)',
    defaultHelp: DEFAULT_ENTRY_EVENTS,
    example: 'off',
    fallback: () => DEFAULT_ENTRY_EVENTS,
  },
  {
    key: 'metricsPort',
    flag: '--metrics-port',
    env: 'ZOOTT_METRICS_PORT',
    kind: 'int',
    arg: 'port',
    unit: 'port',
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
    key: 'heapRoom',
    flag: '--heap-room',
    env: 'ZOOTT_HEAP_ROOM',
    kind: 'int',
    arg: 'percent',
    unit: 'percent',
    help: "garbage the JavaScript heap may gather between full collections, in percent of its live data (0 = V8's own choice, up to 300% on a busy worker)",
    defaultHelp: String(DEFAULT_HEAP_ROOM),
    example: '25',
    fallback: () => DEFAULT_HEAP_ROOM,
  },
  {
    ...LOG_LEVEL_SETTING,
    defaultHelp: 'info',
    example: 'warn',
    fallback: () => 'info',
  },
  {
    ...TRACE_SETTING,
    defaultHelp: 'false',
    example: 'true',
    fallback: () => false,
  },
];

/** The settings as read from flags, environment and a config file. */
export interface FileSettings extends ZkSecuritySettings {
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
  jobCgroup?: JobCgroupMode;
  passEnv?: string[];
  jobTimeoutMs?: number;
  killGraceMs?: number;
  maxOutputBytes?: number;
  graceMs?: number;
  localityWaitMs?: number;
  entryEvents?: EntryEventsMode;
  metricsPort?: number;
  metricsHost?: string;
  heapRoom?: number;
  logLevel?: string;
  /** Read by the zoott-worker program, which starts the SDK; the daemon takes `telemetry`. */
  trace?: boolean;
}
