import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

/** What a config file may set. Every field is optional; flags and env win over it. */
export interface ConfigFile {
  /** ZooKeeper connect string, chroot allowed: `h1:2181,h2:2181/myapp`. */
  connect?: string;
  /** Digest credentials `user:password`. */
  auth?: string;
  /** Default world. */
  world?: string;
  /** Where `zoott lock` creates lock nodes (default `/lock`). */
  lockDir?: string;
  /** Seconds to wait for the first connection (default 10). */
  connectTimeout?: number;
  /** Requested session timeout in seconds (default 10). */
  sessionTimeout?: number;
}

const FIELDS: Record<keyof ConfigFile, 'string' | 'number'> = {
  connect: 'string',
  auth: 'string',
  world: 'string',
  lockDir: 'string',
  connectTimeout: 'number',
  sessionTimeout: 'number',
};

/** Files looked at, in order, when neither --config nor ZOOTT_CONFIG names one. */
export function defaultConfigPaths(cwd: string, env: NodeJS.ProcessEnv): string[] {
  const xdg = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return [
    join(cwd, 'zoott.config.yaml'),
    join(cwd, 'zoott.config.yml'),
    join(cwd, 'zoott.config.json'),
    join(xdg, 'zoott', 'config.yaml'),
    join(xdg, 'zoott', 'config.json'),
  ];
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
  const named = explicit ?? (env.ZOOTT_CONFIG || undefined);
  if (named !== undefined) {
    if (!existsSync(named))
      throw new CliError(
        `config file ${named} does not exist`,
        ExitCode.NOT_FOUND,
        explicit ? 'check --config' : 'check ZOOTT_CONFIG',
      );
    return { path: named, config: parseConfig(readFileSync(named, 'utf8'), named) };
  }
  for (const p of defaultConfigPaths(cwd, env)) {
    if (existsSync(p)) return { path: p, config: parseConfig(readFileSync(p, 'utf8'), p) };
  }
  return { path: null, config: {} };
}

/** Parses and checks a config file's text (YAML, of which JSON is a subset). */
export function parseConfig(text: string, source: string): ConfigFile {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    throw new CliError(`config file ${source} does not parse: ${(err as Error).message}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new CliError(`config file ${source}: must be a mapping of fields`);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const kind = FIELDS[key as keyof ConfigFile];
    if (!kind)
      throw new CliError(
        `config file ${source}: unknown field ${JSON.stringify(key)}`,
        ExitCode.USAGE,
        `known fields: ${Object.keys(FIELDS).join(', ')}`,
      );
    if (typeof v !== kind)
      throw new CliError(
        `config file ${source}: ${key} must be a ${kind}, got ${JSON.stringify(v)}`,
      );
    out[key] = v;
  }
  return out as ConfigFile;
}
