// What is made from a settings table (setting-values.ts's row format): each setting's --help
// entry and README row, for zoott, zoott-worker and zoott-amqp-bridge alike, and the check that a
// program's --help and README say what its table says and that each setting has one unit.

import type { SettingSpecBase } from './setting-values.js';

/** How a program takes a switch: alone (`--trace`) or with an optional value (`--trace [bool]`). */
export type SwitchForm = 'alone' | 'optional-value';

/** A setting's flag as --help shows it: `--grace <ms>`, `--trace`, `--trace [bool]`. */
export function settingFlags(row: SettingSpecBase, switches: SwitchForm = 'alone'): string {
  if (row.kind !== 'bool') return `${row.flag} <${row.arg}>`;
  return switches === 'alone' ? row.flag : `${row.flag} [bool]`;
}

/** A setting's --help description: what it is, its variable, key and unit, and its default. */
export function settingHelp(row: SettingSpecBase): string {
  const unit = row.unit ? `; in ${row.unit}` : '';
  const fallback = row.defaultHelp !== undefined ? ` (default: ${row.defaultHelp})` : '';
  return `${row.help} [env ${row.env}; config "${row.key}"${unit}]${fallback}`;
}

/** The header of a settings table in a README. */
export const SETTINGS_TABLE_HEADER = [
  '| flag | environment | config key | unit | default | meaning |',
  '| ---- | ----------- | ---------- | ---- | ------- | ------- |',
];

/** A setting's row in its program's README table. */
export function settingReadmeRow(row: SettingSpecBase): string {
  const cells = [
    `\`${row.flag}\``,
    `\`${row.env}\``,
    `\`${row.key}\``,
    row.unit ?? '—',
    row.defaultHelp ?? '—',
    row.help,
  ];
  return `| ${cells.join(' | ')} |`;
}

/** A program's whole README table of settings, header included. */
export function settingsReadmeTable(table: readonly SettingSpecBase[]): string {
  return [...SETTINGS_TABLE_HEADER, ...table.map(settingReadmeRow)].join('\n');
}

/**
 * Rows whose unit is not the one unit of what they measure: a whole number names what it
 * counts, a duration is in ms (key `...Ms`, variable `..._MS`), a size in bytes.
 */
export function unitFindings(table: readonly SettingSpecBase[]): string[] {
  const out: string[] = [];
  for (const row of table) {
    if (row.kind === 'int' && row.unit === undefined)
      out.push(`${row.key}: a whole number with no unit`);
    if (row.kind !== 'int' && row.unit !== undefined)
      out.push(`${row.key}: a unit (${row.unit}) on a ${row.kind} setting`);
    const suffix = { ms: ['Ms', '_MS'], bytes: ['Bytes', '_BYTES'] } as const;
    for (const [unit, [keyEnd, envEnd]] of Object.entries(suffix)) {
      const named = row.key.endsWith(keyEnd) || row.env.endsWith(envEnd);
      const both = row.key.endsWith(keyEnd) && row.env.endsWith(envEnd);
      if (row.unit === unit && !both)
        out.push(
          `${row.key}: in ${unit}, so its key ends in ${keyEnd} and its variable in ${envEnd}`,
        );
      if (named && row.unit !== unit)
        out.push(`${row.key}: named as in ${unit}, but its unit is ${row.unit ?? 'none'}`);
    }
  }
  return out;
}

/**
 * Where a README's settings table disagrees with `table`: a row missing or different, a row
 * of a flag the table lacks, a table without the header.
 */
export function readmeFindings(table: readonly SettingSpecBase[], readme: string): string[] {
  const lines = readme.split('\n');
  const start = lines.indexOf(SETTINGS_TABLE_HEADER[0]!);
  if (start === -1 || lines[start + 1] !== SETTINGS_TABLE_HEADER[1])
    return [`README: no settings table (${SETTINGS_TABLE_HEADER[0]})`];
  const rows: string[] = [];
  for (let i = start + 2; i < lines.length && lines[i]!.startsWith('|'); i++) rows.push(lines[i]!);
  const out: string[] = [];
  const byFlag = new Map(rows.map((line) => [/^\| `([^`]+)`/.exec(line)?.[1] ?? line, line]));
  for (const row of table) {
    const want = settingReadmeRow(row);
    const got = byFlag.get(row.flag);
    if (got === undefined) out.push(`README: no row for ${row.flag}; the table says: ${want}`);
    else if (got !== want)
      out.push(`README: the row of ${row.flag} is\n  ${got}\nthe table says\n  ${want}`);
  }
  const flags = new Set(table.map((row) => row.flag));
  for (const flag of byFlag.keys())
    if (!flags.has(flag)) out.push(`README: a row for ${flag}, which the table does not have`);
  return out;
}

const squeeze = (text: string) => text.replace(/\s+/g, ' ');

/**
 * Where a program's --help output disagrees with `table`: a setting whose flag, description,
 * variable, key, unit or default it does not show as the table says. Commander wraps and pads
 * the lines, so runs of white space count as one space.
 */
export function helpFindings(
  table: readonly SettingSpecBase[],
  help: string,
  switches: SwitchForm = 'alone',
): string[] {
  const shown = squeeze(help);
  return table
    .filter((row) => !shown.includes(squeeze(`${settingFlags(row, switches)} ${settingHelp(row)}`)))
    .map(
      (row) =>
        `--help: ${row.flag} is not shown as the table says: ${settingFlags(row, switches)}  ${settingHelp(row)}`,
    );
}
