// Visible width ignoring ANSI colour codes, so coloured cells still line up.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point
const ANSI = /\u001b\[[0-9;]*m/g;
const width = (s: string) => s.replace(ANSI, '').length;

/**
 * Renders rows as left-aligned columns separated by two spaces; the header row (if any)
 * comes first. Trailing spaces are trimmed so piped output diffs cleanly.
 */
export function renderTable(rows: string[][], header?: string[]): string {
  const all = header ? [header, ...rows] : rows;
  const widths: number[] = [];
  for (const row of all)
    for (const [index, cell] of row.entries())
      widths[index] = Math.max(widths[index] ?? 0, width(cell));
  return all
    .map((row) =>
      row
        .map((cell, index) =>
          index === row.length - 1 ? cell : cell + ' '.repeat(widths[index]! - width(cell)),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
