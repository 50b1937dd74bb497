import {
  type Acl,
  type Coordinator,
  CREATOR_ALL_ACL,
  createEngine,
  type Engine,
  type EngineLogger,
  isZoottError,
  OPEN_ACL,
} from '@zoott/core';
import { type CorruptSink, validateUserWorldName } from '@zoott/core/internal';
import { ZkConf } from '@zoott/core/recipes';
import {
  parseCredential,
  readAuthFile,
  type ZkSecuritySettings,
  zkSecurityHint,
} from '@zoott/jobs/config';
import { connectZk, ensureChroot as ensureZkChroot, type ZkOptions } from '@zoott/zk-adapter';
import { type ConfigFile, loadConfig } from './config.js';
import { CliError, explain } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, globalSetting } from './global-settings.js';
import { parseDelay } from './when.js';
import { type CliZkSecurity, resolveAcl, resolveZkSecurity } from './zk-security.js';

/** Global options every verb accepts (and the shared TLS/SASL flags, zk-security.ts). */
export interface GlobalOptions extends Partial<Record<keyof ZkSecuritySettings, string | boolean>> {
  connect?: string;
  auth?: string;
  authFile?: string;
  world?: string;
  config?: string;
  json?: boolean;
  debug?: boolean;
  embedded?: boolean;
  connectTimeout?: string;
  acl?: string[];
}

/** Where and how to connect, after flags, environment and config file are merged. */
export interface Settings {
  /** Connect string, or `null` when nothing named a server (the demo then runs embedded). */
  connect: string | null;
  /** Where the connect string came from, for messages. */
  connectFrom: 'flag' | 'env' | 'config' | 'default' | null;
  /** Digest credentials `user:password` (from --auth / ZOOTT_AUTH / auth, plus the auth file). */
  auth: string[];
  world: string;
  lockDir: string | null;
  connectTimeoutMs: number;
  sessionTimeoutMs: number;
  /** What the settings say to the user once (a deprecated key), printed on stderr. */
  notices: string[];
  configPath: string | null;
  /** TLS and a SASL login to a secured ZooKeeper. */
  zkSecurity: CliZkSecurity;
  /** The `--acl` entries; null: the default (the credentials' identities, else open). */
  acl: Acl[] | 'open' | null;
}

/** The ZooKeeper address used when no flag, environment or config gives one. */
export const DEFAULT_CONNECT = '127.0.0.1:2181';
/** The world used when no flag, environment or config gives one. */
export const DEFAULT_WORLD = 'default';

/**
 * Merges flags, environment and config file, each setting as its row in global-settings.ts
 * says.
 */
export function resolveSettings(
  opts: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Settings {
  const { path, config } = loadConfig(opts.config, env, cwd);
  const notices: string[] = [];
  const pick = <T>(flag: string | undefined, envName: string, file: T | undefined) =>
    flag !== undefined && flag !== ''
      ? { v: flag as string | T, from: 'flag' as const }
      : env[envName]
        ? { v: env[envName] as string | T, from: 'env' as const }
        : file !== undefined
          ? { v: file as string | T, from: 'config' as const }
          : null;
  // The variables are the rows' (global-settings.ts), so --help and the README name them.
  const envOf = (key: string) => globalSetting(key).env;
  const connect = pick(opts.connect, envOf('connect'), config.connect);
  const auth = pick(opts.auth, envOf('auth'), config.auth);
  const authFile = pick(opts.authFile, envOf('authFile'), config.authFile);
  const world = pick(opts.world, envOf('world'), config.world);
  const where = { flag: '--auth', env: envOf('auth'), config: 'auth in the config file' };
  // The environment and the file may list several (comma-separated / a YAML list).
  const specs =
    auth === null
      ? []
      : Array.isArray(auth.v)
        ? auth.v
        : auth.from === 'flag'
          ? [auth.v as string]
          : (auth.v as string).split(',').filter((a) => a.trim() !== '');
  let credentials: string[];
  try {
    credentials = [
      ...specs.map((a) => parseCredential(a.trim(), auth ? where[auth.from] : '--auth').auth),
      ...(authFile ? readAuthFile(authFile.v as string).map((c) => c.auth) : []),
    ];
  } catch (err) {
    throw new CliError(
      (err as Error).message,
      ExitCode.USAGE,
      'credentials look like alice:secret or digest:alice:secret; keep them in --auth-file or ZOOTT_AUTH rather than on the command line',
    );
  }
  let worldName: string;
  try {
    worldName = validateUserWorldName(world?.v ?? DEFAULT_WORLD);
  } catch (err) {
    throw new CliError((err as Error).message, ExitCode.USAGE);
  }
  return {
    connect: (connect?.v as string | undefined) ?? null,
    connectFrom: connect?.from ?? null,
    auth: credentials,
    world: worldName,
    lockDir: config.lockDir ?? null,
    connectTimeoutMs: connectTimeoutOf(opts.connectTimeout, env, config, path, notices),
    sessionTimeoutMs: msKeyOf(config, path, notices, SESSION_TIMEOUT_KEYS),
    configPath: path,
    notices,
    zkSecurity: resolveZkSecurity(
      opts as Record<string, unknown>,
      env,
      config as Record<string, unknown>,
      path,
    ),
    acl: resolveAcl(opts.acl, env, config.acl),
  };
}

/** A duration in the config file: its key in ms, its deprecated key in seconds, its default. */
interface MsKeys {
  ms: 'sessionTimeoutMs' | 'connectTimeoutMs';
  seconds: 'sessionTimeout' | 'connectTimeout';
  defaultMs: number;
}

const SESSION_TIMEOUT_KEYS: MsKeys = {
  ms: 'sessionTimeoutMs',
  seconds: 'sessionTimeout',
  defaultMs: 10_000,
};
const CONNECT_TIMEOUT_KEYS: MsKeys = {
  ms: 'connectTimeoutMs',
  seconds: 'connectTimeout',
  defaultMs: DEFAULT_CONNECT_TIMEOUT_MS,
};

/**
 * A duration from the config file, in ms: its `...Ms` key, the one unit every zoott program
 * reads. The file's old key in seconds is still read, converted, with a notice saying what
 * to write instead; both keys at once must agree.
 */
function msKeyOf(config: ConfigFile, path: string | null, notices: string[], keys: MsKeys): number {
  const file = `config file ${path ?? '(none)'}`;
  const [ms, seconds] = [config[keys.ms], config[keys.seconds]];
  for (const [key, value, unit] of [
    [keys.ms, ms, 'ms'],
    [keys.seconds, seconds, 'seconds'],
  ] as const)
    if (value !== undefined && (!Number.isFinite(value) || value <= 0))
      throw new CliError(`${file}: ${key} ${value}: must be a positive number of ${unit}`);
  if (seconds === undefined) return ms === undefined ? keys.defaultMs : Math.round(ms);
  const converted = Math.round(seconds * 1000);
  if (ms !== undefined && Math.round(ms) !== converted)
    throw new CliError(
      `${file}: ${keys.seconds}: ${seconds} (seconds) and ${keys.ms}: ${ms} disagree`,
      ExitCode.USAGE,
      `keep only ${keys.ms} (${keys.seconds}, in seconds, is deprecated)`,
    );
  notices.push(
    `warning: ${file}: ${keys.seconds}: ${seconds} (seconds) is deprecated; write ${keys.ms}: ${converted}`,
  );
  return converted;
}

/**
 * The connect timeout in ms: `--connect-timeout` (a duration with its unit; a bare number,
 * as old scripts wrote it, is still seconds, with a notice saying to write the unit), else
 * ZOOTT_CONNECT_TIMEOUT_MS (ms), else the config file, else the default.
 */
function connectTimeoutOf(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  config: ConfigFile,
  path: string | null,
  notices: string[],
): number {
  const row = globalSetting('connectTimeoutMs');
  if (flag !== undefined) {
    const ms = parseDelay(flag, row.flag);
    if (ms <= 0)
      throw new CliError(
        `${row.flag} ${JSON.stringify(flag)}: must be more than 0`,
        ExitCode.USAGE,
        'e.g. 500ms, 10s, 1m',
      );
    if (/^\s*\d+(\.\d+)?\s*$/.test(flag))
      notices.push(
        `warning: ${row.flag} ${flag.trim()}: a number without a unit is read as seconds (${ms} ms); write the unit: ${row.flag} ${flag.trim()}s`,
      );
    return ms;
  }
  const fromEnv = env[row.env];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!/^\d+$/.test(fromEnv.trim()) || Number(fromEnv) <= 0)
      throw new CliError(
        `${row.env} ${JSON.stringify(fromEnv)}: must be a positive whole number of ms`,
        ExitCode.USAGE,
        `e.g. ${row.env}=5000`,
      );
    return Number(fromEnv);
  }
  return msKeyOf(config, path, notices, CONNECT_TIMEOUT_KEYS);
}

function zkOptions(settings: Settings): ZkOptions {
  // A SASL login and a client certificate (which ZooKeeper maps to an x509 id) are
  // credentials too.
  const login =
    settings.zkSecurity.options.sasl !== undefined ||
    settings.zkSecurity.options.tls?.cert !== undefined;
  return {
    connectTimeoutMs: settings.connectTimeoutMs,
    sessionTimeoutMs: settings.sessionTimeoutMs,
    ...settings.zkSecurity.options,
    // With credentials, what zoott creates belongs to them (ZooKeeper's `auth` scheme), as
    // in zoott-worker: `--auth` on `init` locks a world down, and it stays locked; `--acl`
    // names the ACL outright.
    ...(settings.auth.length > 0
      ? { auth: settings.auth.map((auth) => ({ scheme: 'digest', auth })) }
      : {}),
    ...(settings.acl === 'open'
      ? { defaultAcl: OPEN_ACL }
      : settings.acl !== null
        ? { defaultAcl: settings.acl }
        : settings.auth.length > 0 || login
          ? { defaultAcl: CREATOR_ALL_ACL }
          : {}),
  };
}

/**
 * Opens a ZooKeeper session for the settings. Unreachable servers and bad credentials
 * become CliErrors that say what to check.
 */
export async function openZk(
  settings: Settings,
  connect = settings.connect ?? DEFAULT_CONNECT,
): Promise<Coordinator> {
  try {
    return await connectZk(connect, zkOptions(settings));
  } catch (err) {
    throw connectFailure(err, settings, connect);
  }
}

/**
 * Creates the chroot of the connect string (and its parents) when it is missing, with `acl`
 * (default: the session's): ZooKeeper does not create it, and every request below a missing
 * chroot fails.
 */
export async function ensureChroot(settings: Settings, acl?: readonly Acl[]): Promise<void> {
  const connect = settings.connect ?? DEFAULT_CONNECT;
  try {
    await ensureZkChroot(
      connect,
      acl ? { ...zkOptions(settings), defaultAcl: acl } : zkOptions(settings),
    );
  } catch (err) {
    throw connectFailure(err, settings, connect);
  }
}

/** A connection failure as the CLI reports it: a bad connect string, or no server. */
function connectFailure(err: unknown, settings: Settings, connect: string): unknown {
  if (isZoottError(err, 'INVALID_CONFIG'))
    return new CliError(
      err.message,
      ExitCode.USAGE,
      'e.g. --connect 127.0.0.1:2181 or h1:2181,h2:2181/myapp',
    );
  const explained = explain(err, { connect });
  // A TLS connect that cannot work says why, and which setting to change.
  const security = isZoottError(err) ? zkSecurityHint(err) : null;
  if (explained.exitCode === ExitCode.UNREACHABLE && security) {
    const why = (err as Error).message
      .replace(/^CONNECTION_LOSS: could not connect to \S+?: /, '')
      .replace(/ \(connect\)$/, '');
    return new CliError(
      `cannot connect to ZooKeeper at ${connect}: ${why}`,
      ExitCode.UNREACHABLE,
      security,
    );
  }
  if (explained.exitCode === ExitCode.UNREACHABLE)
    return new CliError(
      /refused/.test(explained.message)
        ? `cannot reach ZooKeeper at ${connect}: ${explained.message.replace(/^.*?every server refused/, 'every server refused')}`
        : `cannot reach ZooKeeper at ${connect} (no answer within ${settings.connectTimeoutMs / 1000} s)`,
      ExitCode.UNREACHABLE,
      settings.connect
        ? 'is the server running? Check --connect / ZOOTT_CONNECT / the config file'
        : `no server was named, so ${DEFAULT_CONNECT} was tried: pass --connect host:port (or run \`zoott demo\`, which needs no server)`,
    );
  return err;
}

/** A lazily opened session plus the engine of the selected world; close it when done. */
export class Session {
  private zk: Promise<Coordinator> | null = null;
  private eng: Engine | null = null;
  /** Told about the nodes the engine's reads skip as corrupt. */
  onCorrupt: CorruptSink | undefined;

  constructor(
    readonly settings: Settings,
    private readonly debug = false,
    private readonly open: () => Promise<Coordinator> = () => openZk(settings),
  ) {}

  coordinator(): Promise<Coordinator> {
    if (!this.zk) this.zk = this.open();
    return this.zk;
  }

  async engine(): Promise<Engine> {
    if (!this.eng)
      this.eng = createEngine(await this.coordinator(), {
        world: this.settings.world,
        logger: cliLogger(this.debug),
        ...(this.onCorrupt ? { onCorrupt: this.onCorrupt } : {}),
      });
    return this.eng;
  }

  /** The lock settings (lock dir, node id) as recipes want them. */
  conf(): ZkConf {
    return new ZkConf({
      hosts: this.settings.connect ?? DEFAULT_CONNECT,
      ...(this.settings.lockDir ? { lockDir: this.settings.lockDir } : {}),
    });
  }

  async close(): Promise<void> {
    this.eng?.close();
    const zk = this.zk;
    this.zk = null;
    if (zk) await (await zk.catch(() => null))?.close().catch(() => undefined);
  }
}

/** Engine warnings go to stderr with --debug only: a CLI read should not chatter. */
export function cliLogger(debug: boolean): EngineLogger {
  const write = (level: string) => (fields: object, msg: string) => {
    if (debug) process.stderr.write(`[zoott ${level}] ${msg} ${JSON.stringify(fields)}\n`);
  };
  return { warn: write('warn'), error: write('error'), info: write('info'), debug: write('debug') };
}
