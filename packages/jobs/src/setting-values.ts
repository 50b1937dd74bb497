import { ZoottError } from '@zoott/core';

// Typed setting values from flags, environment variables and a config file, with errors that
// name the setting and where it came from. Each program keeps its own table of settings in
// the one row format below (zoott-worker's is settings.ts; zoott-amqp-bridge and zoott have
// theirs) and reads it through here, so a value means the same in every zoott program.

/** Value kinds of settings. */
export type SettingKind = 'string' | 'int' | 'list' | 'bool';

/**
 * What a whole number measures. One unit per setting: every duration is in milliseconds (its
 * key ends in `Ms`, its variable in `_MS`), every size in bytes (`Bytes`, `_BYTES`).
 */
export type SettingUnit = 'ms' | 'bytes' | 'count' | 'percent' | 'port';

/**
 * One row of a settings table, the format of zoott, zoott-worker and zoott-amqp-bridge alike:
 * its name (the config-file key), flag, environment variable, parser (`kind`, and `values`
 * for a fixed set), unit, default and description. Flag parsing, --help, --print-config and
 * the README tables are made from (or checked against) the rows: setting-table.ts.
 */
export interface SettingSpecBase<K extends string = string> {
  /** The setting's name, and its key in the config file. */
  key: K;
  flag: string;
  env: string;
  /** How the value is parsed from a flag, a variable or the file. */
  kind: SettingKind;
  /** Placeholder shown in --help ('' for a switch). */
  arg: string;
  /** The description, in --help and the README. */
  help: string;
  /** What an `int` setting measures; none for other kinds. */
  unit?: SettingUnit;
  /** The only values a `string` setting takes, when it has a fixed set: its errors name them. */
  values?: readonly string[];
  /** The default as --help and the README say it; none: unset unless given. */
  defaultHelp?: string;
}

/** Where a setting's value came from. */
export type SettingSource = 'flag' | 'env' | 'file' | 'default';

/** How one program reads its values, where programs differ. */
export interface ValueRules {
  /** The smallest whole number an `int` setting takes (0 may mean "off" for one program only). */
  minInt: number;
  /** Whether a rejected string, list or log level is quoted in the error (ints always are). */
  quoteRejected: boolean;
}

/** The worker's rules: the defaults. */
export const WORKER_VALUE_RULES: ValueRules = { minInt: 0, quoteRejected: true };

/** Log levels every zoott program accepts (pino's). */
export const LOG_LEVELS: readonly string[] = [
  'trace',
  'debug',
  'info',
  'warn',
  'error',
  'fatal',
  'silent',
];

/** The INVALID_CONFIG error of a bad setting: `<where>: <why>`. */
export function settingError(where: string, why: string, field: string): ZoottError {
  return new ZoottError('INVALID_CONFIG', `${where}: ${why}`, { field });
}

function got(value: unknown, rules: ValueRules): string {
  return rules.quoteRejected ? `, got ${JSON.stringify(value)}` : '';
}

/**
 * One value as its kind wants it. Flags and environment give text; a config file may give the
 * typed value itself. Lists are comma-separated text or arrays; switches true/false/1/0/yes/no.
 *
 * @param where the flag, variable or `file: key` the value came from, for the error.
 * @throws ZoottError INVALID_CONFIG naming `where`.
 */
export function readSettingValue(
  spec: SettingSpecBase,
  value: unknown,
  where: string,
  rules: ValueRules = WORKER_VALUE_RULES,
): unknown {
  switch (spec.kind) {
    case 'string':
      // Before the string check: a config file's `false` for an `off` is told the values too.
      if (spec.values !== undefined && !spec.values.includes(value as string))
        throw settingError(
          where,
          `must be one of ${spec.values.join(', ')}${got(value, rules)}`,
          spec.key,
        );
      if (typeof value !== 'string' || value === '')
        throw settingError(where, `must be a non-empty string${got(value, rules)}`, spec.key);
      return value;
    case 'int': {
      const parsed =
        typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
      if (typeof parsed !== 'number' || !Number.isInteger(parsed) || parsed < rules.minInt)
        throw settingError(
          where,
          `must be a whole number >= ${rules.minInt}, got ${JSON.stringify(value)}`,
          spec.key,
        );
      return parsed;
    }
    case 'bool': {
      if (typeof value === 'boolean') return value;
      const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
      if (['true', '1', 'yes'].includes(text)) return true;
      if (['false', '0', 'no'].includes(text)) return false;
      throw settingError(where, `must be true or false, got ${JSON.stringify(value)}`, spec.key);
    }
    case 'list': {
      const items = Array.isArray(value)
        ? value
        : typeof value === 'string'
          ? value.split(',')
          : null;
      if (items === null || items.some((s) => typeof s !== 'string'))
        throw settingError(where, `must be a list of strings${got(value, rules)}`, spec.key);
      return (items as string[]).map((s) => s.trim()).filter((s) => s !== '');
    }
  }
}

/** The inputs of {@link mergeSettingSources}. */
export interface SettingInputs<K extends string> {
  /** Flags, keyed like the table. */
  flags?: Partial<Record<K, unknown>>;
  env?: Readonly<Record<string, string | undefined>>;
  /** The program's part of the config file: a mapping keyed like the table. */
  file?: unknown;
  /** The file's name in errors. */
  fileName?: string;
}

/**
 * The values flags, environment and config file set (in that order of precedence), with the
 * source of each; settings none of them sets are absent (defaults are the caller's). An
 * empty environment variable counts as unset. Unknown file keys are errors, so a misspelt key
 * is caught.
 *
 * @throws ZoottError INVALID_CONFIG naming the setting and where it came from.
 */
export function mergeSettingSources<K extends string>(
  table: readonly SettingSpecBase<K>[],
  input: SettingInputs<K>,
  rules: ValueRules = WORKER_VALUE_RULES,
): { values: Partial<Record<K, unknown>>; sources: Partial<Record<K, SettingSource>> } {
  const file = input.file ?? {};
  const fileName = input.fileName ?? 'config file';
  if (typeof file !== 'object' || file === null || Array.isArray(file))
    throw settingError(fileName, 'must hold a mapping of settings', 'config');
  const known = new Set<string>(table.map((s) => s.key));
  for (const key of Object.keys(file))
    if (!known.has(key))
      throw settingError(
        `${fileName}: ${key}`,
        `unknown setting (known: ${[...known].join(', ')})`,
        key,
      );
  const values: Partial<Record<K, unknown>> = {};
  const sources: Partial<Record<K, SettingSource>> = {};
  for (const spec of table) {
    const flag = input.flags?.[spec.key];
    const env = input.env?.[spec.env];
    const fromFile = (file as Record<string, unknown>)[spec.key];
    if (flag !== undefined) {
      values[spec.key] = readSettingValue(spec, flag, spec.flag, rules);
      sources[spec.key] = 'flag';
    } else if (env !== undefined && env !== '') {
      values[spec.key] = readSettingValue(spec, env, spec.env, rules);
      sources[spec.key] = 'env';
    } else if (fromFile !== undefined && fromFile !== null) {
      values[spec.key] = readSettingValue(spec, fromFile, `${fileName}: ${spec.key}`, rules);
      sources[spec.key] = 'file';
    }
  }
  return { values, sources };
}

/**
 * Refuses a log level pino does not know.
 *
 * @throws ZoottError INVALID_CONFIG with field `logLevel`.
 */
export function checkLogLevel(
  level: string | undefined,
  rules: ValueRules = WORKER_VALUE_RULES,
): void {
  if (level !== undefined && !LOG_LEVELS.includes(level))
    throw settingError(
      'logLevel',
      `must be one of ${LOG_LEVELS.join(', ')}${rules.quoteRejected ? `, got ${level}` : ''}`,
      'logLevel',
    );
}
