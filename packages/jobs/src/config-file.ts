import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ZoottError } from '@zoott/core';
import { parse as parseYaml } from 'yaml';
import { maskAclSpec } from './acl-entries.js';
import { checkPrivate, readTrusted, type TrustRule } from './file-trust.js';
import { ZK_SECURITY_SETTINGS } from './zk-security.js';

/**
 * The configuration file shared by `zoott` and `zoott-worker` (the credential syntax both
 * accept is credentials.ts). It lives here (imported by the CLI as `@zoott/jobs/config`) because the CLI
 * and the worker program both use the job layer, and this module pulls in nothing heavier than `yaml`.
 *
 * One file serves both tools: top-level keys are read by every tool that knows them (and
 * skipped by a tool that does not, as long as the other tool knows them); a `cli:` or
 * `worker:` section holds what only one tool should see and wins over the top level for it.
 * A key no tool knows is an error, so a misspelt key is caught by whichever tool runs first.
 */

/** The two tools that read the file. */
export type Tool = 'cli' | 'worker';

/** Keys the CLI reads (top level or its `cli:` section). */
export const CLI_FILE_KEYS: readonly string[] = [
  'connect',
  'auth',
  'authFile',
  'world',
  'lockDir',
  // The connect timeout in ms; `connectTimeout` (seconds) is deprecated, read with a warning.
  'connectTimeoutMs',
  'connectTimeout',
  // The session timeout in ms, as every zoott program takes it (the worker's key too).
  'sessionTimeoutMs',
  // Deprecated: the session timeout in seconds, read (converted, with a warning) for one
  // release so that existing files keep working.
  'sessionTimeout',
  // The ACL of what it creates, as the worker's `acl` (shared at the top level).
  'acl',
  // TLS and SASL to a secured ZooKeeper: the same keys as the worker's (zk-security.ts).
  ...ZK_SECURITY_SETTINGS.map((s) => s.key),
];

/** Environment variable naming the config file of either tool. */
export const CONFIG_FILE_ENV = 'ZOOTT_CONFIG';

function bad(message: string, field = 'config'): ZoottError {
  return new ZoottError('INVALID_CONFIG', message, { field });
}

/** Files looked at, in order, when no config file is named. */
export function defaultConfigPaths(cwd: string, env: Readonly<Record<string, string | undefined>>) {
  const xdg = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return [
    join(cwd, 'zoott.config.yaml'),
    join(cwd, 'zoott.config.yml'),
    join(cwd, 'zoott.config.json'),
    join(xdg, 'zoott', 'config.yaml'),
    join(xdg, 'zoott', 'config.json'),
  ];
}

/** Where the config file came from. */
export interface FoundConfig {
  path: string;
  /** `flag` (--config), `env` (the variable named in `envName`) or `default` (a default path). */
  from: 'flag' | 'env' | 'default';
  envName?: string;
}

/**
 * Picks the config file: the one named by the flag, else by the first set variable of
 * `envNames` (a named file must exist), else the first default path that exists, else none.
 *
 * @throws ZoottError INVALID_CONFIG with `details.field` `config` for a named file that is missing.
 */
export function findConfigFile(options: {
  explicit: string | undefined;
  envNames: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}): FoundConfig | null {
  if (options.explicit !== undefined && options.explicit !== '') {
    if (!existsSync(options.explicit))
      throw bad(`config file ${options.explicit} does not exist (check --config)`);
    return { path: options.explicit, from: 'flag' };
  }
  for (const name of options.envNames) {
    const value = options.env[name];
    if (value === undefined || value === '') continue;
    if (!existsSync(value)) throw bad(`config file ${value} does not exist (check ${name})`);
    return { path: value, from: 'env', envName: name };
  }
  for (const candidate of defaultConfigPaths(options.cwd, options.env))
    if (existsSync(candidate)) return { path: candidate, from: 'default' };
  return null;
}

/** Parses a config file's text: YAML, of which JSON is a subset. Empty text is `{}`. */
export function parseConfigText(text: string, source: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    throw bad(`config file ${source} does not parse: ${(err as Error).message}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw bad(`config file ${source}: must be a mapping of settings`);
  return value as Record<string, unknown>;
}

/** Keys whose values are credentials: a file that sets one must be private. */
const SECRET_KEYS = ['auth', 'acl'];

/** Whether a parsed config file sets credentials, at the top or in a tool's section. */
export function setsCredentials(doc: Record<string, unknown>): boolean {
  const sections = [doc, doc.cli, doc.worker].filter(
    (v): v is Record<string, unknown> => typeof v === 'object' && v !== null,
  );
  return sections.some((v) => SECRET_KEYS.some((k) => v[k] !== undefined));
}

const CONFIG_TRUST: TrustRule = { kind: 'config file', field: 'config' };

/**
 * Reads and parses a config file, if it may be trusted: owned by the user running the program
 * or by root, writable by nobody else, and, when it sets credentials, readable by nobody else
 * (file-trust.ts). Where it was found (--config, a variable, a default path) does not matter.
 *
 * @throws ZoottError INVALID_CONFIG (field `config`) naming the file and what is wrong.
 */
export function readConfigDocument(path: string): Record<string, unknown> {
  let read: ReturnType<typeof readTrusted>;
  try {
    read = readTrusted(path, CONFIG_TRUST);
  } catch (err) {
    if (err instanceof ZoottError) throw err;
    throw bad(`cannot read the config file ${path} (${(err as Error).message})`);
  }
  const doc = parseConfigText(read.text, path);
  if (setsCredentials(doc)) checkPrivate(path, read.stat, CONFIG_TRUST);
  return doc;
}

/**
 * The settings one tool takes from a parsed config file: the top-level keys it knows, then
 * its own section over them. Checks the whole file, so either tool reports a key nobody knows.
 *
 * @param known keys of each tool (the worker's come from its settings table).
 * @throws ZoottError INVALID_CONFIG naming the key and the file.
 */
export function settingsFor(
  doc: Record<string, unknown>,
  tool: Tool,
  known: Readonly<Record<Tool, readonly string[]>>,
  source: string,
): Record<string, unknown> {
  const anyTool = new Set([...known.cli, ...known.worker]);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) {
    if (key === 'cli' || key === 'worker') continue;
    if (!anyTool.has(key))
      throw bad(
        `config file ${source}: unknown key ${JSON.stringify(key)} (known: ${[...anyTool].join(', ')}, and the sections cli: and worker:)`,
        key,
      );
    if (known[tool].includes(key)) out[key] = value;
  }
  for (const section of ['cli', 'worker'] as const) {
    const body = doc[section];
    if (body === undefined || body === null) continue;
    if (typeof body !== 'object' || Array.isArray(body))
      throw bad(`config file ${source}: ${section}: must be a mapping of settings`, section);
    for (const [key, value] of Object.entries(body)) {
      if (!known[section].includes(key))
        throw bad(
          `config file ${source}: ${section}.${key}: unknown ${section} setting (known: ${known[section].join(', ')})`,
          `${section}.${key}`,
        );
      if (section === tool) out[key] = value;
    }
  }
  return out;
}

/** An ACL entry for display: a digest password hidden (`alice:****:cdrwa`), x509 and sasl ids shown. */
export function maskAclEntry(entry: string): string {
  return maskAclSpec(entry);
}
