/**
 * The one settings-table format's documentation check (setting-table.ts): a README row or a
 * --help line that says something else than the table is found, and so is a setting whose
 * unit is not the one unit of what it measures.
 */
import {
  helpFindings,
  readmeFindings,
  type SettingSpecBase,
  settingFlags,
  settingHelp,
  settingReadmeRow,
  settingsReadmeTable,
  unitFindings,
} from '@zoott/jobs/config';
import { describe, expect, it } from 'vitest';

const TABLE: SettingSpecBase[] = [
  {
    key: 'graceMs',
    flag: '--grace',
    env: 'ZOOTT_GRACE_MS',
    kind: 'int',
    arg: 'ms',
    unit: 'ms',
    help: 'how long running tasks may finish',
    defaultHelp: '30000',
  },
  { key: 'trace', flag: '--trace', env: 'ZOOTT_TRACE', kind: 'bool', arg: '', help: 'trace tasks' },
];

/** --help as commander lays it out: flags padded, the description wrapped and indented. */
const help = (rows: SettingSpecBase[]) =>
  rows
    .map(
      (row) =>
        `  ${settingFlags(row).padEnd(30)}${settingHelp(row).replace(/ \[env/, '\n      [env')}`,
    )
    .join('\n');

describe('settings table: README and --help against the table', () => {
  it('a README made from the table and a --help made from it agree', () => {
    const readme = `# tool\n\n${settingsReadmeTable(TABLE)}\n\nMore text.\n`;
    expect(readmeFindings(TABLE, readme)).toEqual([]);
    expect(helpFindings(TABLE, help(TABLE))).toEqual([]);
    expect(settingReadmeRow(TABLE[0]!)).toBe(
      '| `--grace` | `ZOOTT_GRACE_MS` | `graceMs` | ms | 30000 | how long running tasks may finish |',
    );
    expect(settingHelp(TABLE[0]!)).toBe(
      'how long running tasks may finish [env ZOOTT_GRACE_MS; config "graceMs"; in ms] (default: 30000)',
    );
    expect(settingFlags(TABLE[1]!, 'optional-value')).toBe('--trace [bool]');
  });

  it('finds a README row that disagrees, one that is missing, one the table lacks, and no table', () => {
    const table = settingsReadmeTable(TABLE);
    const wrongDefault = table.replace('| 30000 |', '| 60000 |');
    expect(readmeFindings(TABLE, wrongDefault)).toEqual([
      expect.stringMatching(/^README: the row of --grace is/),
    ]);
    const missing = table.split('\n').slice(0, -1).join('\n');
    expect(readmeFindings(TABLE, missing)).toEqual([expect.stringMatching(/no row for --trace/)]);
    const extra = `${table}\n| \`--old\` | \`ZOOTT_OLD\` | \`old\` | — | — | gone |`;
    expect(readmeFindings(TABLE, extra)).toEqual([
      'README: a row for --old, which the table does not have',
    ]);
    expect(readmeFindings(TABLE, '# tool\n')).toEqual([
      expect.stringMatching(/^README: no settings table/),
    ]);
  });

  it('finds a --help line that disagrees with the table', () => {
    const stale = help(TABLE).replace('(default: 30000)', '(default: 60000)');
    expect(helpFindings(TABLE, stale)).toEqual([expect.stringMatching(/^--help: --grace/)]);
    expect(helpFindings(TABLE, help(TABLE.slice(0, 1)))).toEqual([
      expect.stringMatching(/^--help: --trace/),
    ]);
    // The bridge takes `--trace [bool]`: a plain switch is not what its table says.
    expect(helpFindings(TABLE, help(TABLE), 'optional-value')).toEqual([
      expect.stringMatching(/^--help: --trace/),
    ]);
  });

  it('one unit per setting: durations in ms, sizes in bytes, every whole number with its unit', () => {
    expect(unitFindings(TABLE)).toEqual([]);
    const row = TABLE[0]!;
    expect(unitFindings([{ ...row, key: 'grace', env: 'ZOOTT_GRACE' }])).toEqual([
      'grace: in ms, so its key ends in Ms and its variable in _MS',
    ]);
    expect(unitFindings([{ ...row, unit: 'count' }])).toEqual([
      'graceMs: named as in ms, but its unit is count',
    ]);
    const { unit: _unit, ...noUnit } = row;
    expect(unitFindings([noUnit])).toEqual([
      'graceMs: a whole number with no unit',
      'graceMs: named as in ms, but its unit is none',
    ]);
    expect(unitFindings([{ ...TABLE[1]!, unit: 'ms' }])).toEqual([
      'trace: a unit (ms) on a bool setting',
      'trace: in ms, so its key ends in Ms and its variable in _MS',
    ]);
  });
});
