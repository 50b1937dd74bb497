import {
  ACL_ENTRY_FORMS,
  type SettingSpecBase,
  settingFlags,
  settingHelp,
  ZK_SECURITY_SETTINGS,
} from '@zoott/jobs/config';
import { type Command, Option } from 'commander';

// zoott's global settings as rows of the one settings-table format every zoott program
// shares (@zoott/jobs/config): flag, environment variable, config-file key, unit, default as
// shown, description and parser. `zoott --help` shows them as the rows say, and the README's
// "Global options" table is the rows' table (settings-table.test.ts checks both against the
// built binary). The ZooKeeper TLS/SASL rows are the ones zoott-worker shares.

/** A global setting: a row of the shared format, with the short flag the CLI also takes. */
export interface GlobalSetting extends SettingSpecBase {
  /** A one-letter alias (`-c`), shown before the flag in --help. */
  short?: string;
}

/** The default connect timeout, in ms. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** The connection settings only zoott has (the verbs connect; the worker has its own rows). */
export const CONNECTION_SETTINGS: readonly GlobalSetting[] = [
  {
    key: 'connect',
    short: '-c',
    flag: '--connect',
    env: 'ZOOTT_CONNECT',
    kind: 'string',
    arg: 'hosts',
    help: 'ZooKeeper connect string, a chroot allowed: h1:2181,h2:2181/myapp; with none, `demo` runs embedded',
    defaultHelp: '127.0.0.1:2181',
  },
  {
    key: 'auth',
    short: '-a',
    flag: '--auth',
    env: 'ZOOTT_AUTH',
    kind: 'list',
    arg: 'user:password',
    help: 'digest credentials added to the session, user:password or digest:user:password (the variable and the key take several: comma-separated, a YAML list); prefer --auth-file or ZOOTT_AUTH: a command line is readable by every local user',
  },
  {
    key: 'authFile',
    flag: '--auth-file',
    env: 'ZOOTT_AUTH_FILE',
    kind: 'string',
    arg: 'path',
    help: 'a file of credentials, one user:password a line (# comments allowed)',
  },
  {
    key: 'world',
    short: '-w',
    flag: '--world',
    env: 'ZOOTT_WORLD',
    kind: 'string',
    arg: 'name',
    help: 'the world to work on (the demo uses "demo")',
    defaultHelp: 'default',
  },
  {
    key: 'connectTimeoutMs',
    flag: '--connect-timeout',
    env: 'ZOOTT_CONNECT_TIMEOUT_MS',
    kind: 'int',
    arg: 'duration',
    unit: 'ms',
    help: 'how long to wait for the first connection: the flag takes a duration with its unit (500ms, 10s, 1m; a bare number is seconds, with a warning), the variable and the key ms',
    defaultHelp: String(DEFAULT_CONNECT_TIMEOUT_MS),
  },
  {
    key: 'acl',
    flag: '--acl',
    env: 'ZOOTT_ACL',
    kind: 'list',
    arg: 'entry',
    help: `the ACL of what the command creates (init: the world), repeatable: ${ACL_ENTRY_FORMS}, or "open" (the variable comma-separated); default: the identities of --auth, --zk-sasl and the client certificate (ZooKeeper's auth scheme), else open`,
  },
];

/** Every global setting of zoott, in --help's and the README's order. */
export const GLOBAL_SETTINGS: readonly GlobalSetting[] = [
  ...CONNECTION_SETTINGS,
  // TLS and SASL to a secured ZooKeeper: the rows zoott-worker and zoott-amqp-bridge take.
  ...ZK_SECURITY_SETTINGS,
];

/** The global options that are no setting: which file, and how the output looks. */
export const GLOBAL_SWITCHES: readonly { flags: string; help: string }[] = [
  { flags: '--config <file>', help: 'the config file (env ZOOTT_CONFIG; see "Config file")' },
  { flags: '--json', help: 'print one JSON document on stdout (JSON lines for watch)' },
  { flags: '--debug', help: 'print stack traces and engine warnings on stderr' },
];

/** The README's row of a global option that is no setting. */
export function switchReadmeRow(option: { flags: string; help: string }): string {
  return `| \`${option.flags}\` | ${option.help} |`;
}

/** Adds every global setting and switch to the program, as the rows say. */
export function addGlobalOptions(program: Command): void {
  for (const row of GLOBAL_SETTINGS) {
    const flags = settingFlags(row);
    const option = new Option(row.short ? `${row.short}, ${flags}` : flags, settingHelp(row));
    // Repeatable: each --acl adds an entry.
    if (row.key === 'acl')
      option.argParser((value: string, previous: string[] | undefined) => [
        ...(previous ?? []),
        value,
      ]);
    program.addOption(option);
  }
  for (const option of GLOBAL_SWITCHES) program.addOption(new Option(option.flags, option.help));
}

/** The row of a global setting. */
export function globalSetting(key: string): GlobalSetting {
  const row = GLOBAL_SETTINGS.find((s) => s.key === key);
  if (row === undefined) throw new Error(`no global setting ${key}`);
  return row;
}
