import { checkDatasets } from '@zoott/core';
import {
  CLI_FILE_KEYS,
  CONFIG_FILE_ENV,
  type FoundConfig,
  findConfigFile,
  maskAclEntry,
  readConfigDocument,
  settingsFor,
  type Tool,
} from './config-file.js';
import { maskCredential } from './credentials.js';
import { checkOutputCap } from './limits.js';
import {
  checkLogLevel,
  mergeSettingSources,
  type SettingInputs,
  type SettingSource,
  settingError,
} from './setting-values.js';
import { type FileSettings, SETTINGS } from './settings.js';
import { maskZkSecurity } from './zk-security.js';

export * from './acl-entries.js';
export * from './config-file.js';
export * from './credentials.js';
export * from './entry-events.js';
export * from './exit-codes.js';
export * from './file-trust.js';
export * from './heap-room.js';
export * from './setting-table.js';
export * from './setting-values.js';
export * from './settings.js';
export * from './shared-settings.js';
export * from './zk-security.js';

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

/** Settings with the source of each one that is set. */
export interface ResolvedSettings {
  settings: FileSettings;
  sources: Partial<Record<keyof FileSettings, SettingSource>>;
}

/**
 * The inputs of {@link resolveSettings}: flags keyed like the table (`jobTimeoutMs`, not
 * commander's `jobTimeout`), the environment, and the worker's part of the config file (see
 * {@link readWorkerConfig}) or a plain object.
 */
export type SettingSources = SettingInputs<keyof FileSettings>;

/**
 * Merges flags, environment and config file into one settings object, recording where each
 * value came from. Unknown file keys are errors, so a misspelt key is caught.
 *
 * @throws ZoottError INVALID_CONFIG naming the setting and where it came from.
 */
export function resolveSettingsWithSources(sources: SettingSources): ResolvedSettings {
  const fileName = sources.fileName ?? 'config file';
  const merged = mergeSettingSources(SETTINGS, sources);
  const settings = merged.values as FileSettings;
  const from = merged.sources;
  checkLogLevel(settings.logLevel);
  checkOutputCap(settings.maxOutputBytes, 'maxOutputBytes (--max-output)');
  if (settings.datasets !== undefined) {
    const where = { flag: '--datasets', env: 'ZOOTT_DATASETS', file: `${fileName}: datasets` };
    try {
      checkDatasets(settings.datasets);
    } catch (err) {
      const why = (err as Error).message.replace(/^INVALID_CONFIG: datasets: /, '');
      throw settingError(where[from.datasets as 'flag' | 'env' | 'file'], why, 'datasets');
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
  return maskZkSecurity(key, value);
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
