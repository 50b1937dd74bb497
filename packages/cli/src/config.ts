import { isZoottError } from '@zoott/core';
import {
  CONFIG_FILE_ENV,
  defaultConfigPaths,
  FILE_KEYS,
  findConfigFile,
  parseConfigText,
  readConfigDocument,
  settingsFor,
  ZK_SECURITY_SETTINGS,
  type ZkSecuritySettings,
} from '@zoott/jobs/config';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

export { defaultConfigPaths };

/**
 * What the config file sets for the CLI. The file is shared with `zoott-worker`: top-level
 * keys serve both tools, a `cli:` section only this one (see the README). Every field is
 * optional; flags and environment win over it.
 */
export interface ConfigFile extends ZkSecuritySettings {
  /** ZooKeeper connect string, chroot allowed: `h1:2181,h2:2181/myapp`. */
  connect?: string;
  /** Digest credentials `user:password` or `digest:user:password`, one or a list. */
  auth?: string | string[];
  /** File of credentials, one a line. */
  authFile?: string;
  /** Default world. */
  world?: string;
  /** Where `zoott lock` creates lock nodes (default `/lock`). */
  lockDir?: string;
  /** How long to wait for the first connection, in ms (default 10000). */
  connectTimeoutMs?: number;
  /** Deprecated: the connect timeout in seconds; read as `connectTimeoutMs`, with a warning. */
  connectTimeout?: number;
  /** Requested session timeout in ms (default 10000), as `zoott-worker` takes it. */
  sessionTimeoutMs?: number;
  /** Deprecated: the session timeout in seconds; read as `sessionTimeoutMs`, with a warning. */
  sessionTimeout?: number;
  /** ACL entries of what the CLI creates (see --acl). */
  acl?: string | string[];
}

/** `setting`: checked where it is read, by the table every zoott program shares. */
const FIELDS: Record<keyof ConfigFile, 'string' | 'number' | 'strings' | 'setting'> = {
  connect: 'string',
  auth: 'strings',
  authFile: 'string',
  world: 'string',
  lockDir: 'string',
  connectTimeoutMs: 'number',
  connectTimeout: 'number',
  sessionTimeoutMs: 'number',
  sessionTimeout: 'number',
  acl: 'strings',
  ...(Object.fromEntries(ZK_SECURITY_SETTINGS.map((s) => [s.key, 'setting'])) as Record<
    keyof ZkSecuritySettings,
    'setting'
  >),
};

/** The shared module's errors as the CLI reports them. */
function asCliError(err: unknown): unknown {
  if (!isZoottError(err, 'INVALID_CONFIG')) return err;
  if (/does not exist/.test(err.message)) return new CliError(err.message, ExitCode.NOT_FOUND);
  return new CliError(err.message, ExitCode.USAGE);
}

/**
 * Loads the config file: the one named (`--config`, then `ZOOTT_CONFIG`, which must exist),
 * else the first default path that exists, else none.
 */
export function loadConfig(
  explicit: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
): { path: string | null; config: ConfigFile } {
  try {
    const found = findConfigFile({ explicit, envNames: [CONFIG_FILE_ENV], env, cwd });
    if (!found) return { path: null, config: {} };
    return { path: found.path, config: checkFields(readConfigDocument(found.path), found.path) };
  } catch (err) {
    throw asCliError(err);
  }
}

/** Parses and checks a config file's text (YAML, of which JSON is a subset). */
export function parseConfig(text: string, source: string): ConfigFile {
  try {
    return checkFields(parseConfigText(text, source), source);
  } catch (err) {
    throw asCliError(err);
  }
}

/** The CLI's part of a parsed file, each field checked for its type. */
function checkFields(doc: Record<string, unknown>, source: string): ConfigFile {
  const mine = settingsFor(doc, 'cli', FILE_KEYS, source);
  for (const [key, value] of Object.entries(mine)) {
    const kind = FIELDS[key as keyof ConfigFile];
    if (kind === 'setting') continue;
    const ok =
      kind === 'strings'
        ? typeof value === 'string' ||
          (Array.isArray(value) && value.every((x) => typeof x === 'string'))
        : typeof value === kind;
    if (!ok)
      throw new CliError(
        `config file ${source}: ${key} must be ${kind === 'strings' ? 'a string or a list of strings' : `a ${kind}`}, got ${JSON.stringify(key === 'auth' ? '****' : value)}`,
      );
  }
  return mine as ConfigFile;
}
