import { readFileSync } from 'node:fs';

/**
 * The first fenced code block under a Markdown heading, exactly as written: tests run the
 * README's examples from the README itself, never from a copy that could drift.
 */
export function codeUnderHeading(markdownFile: string, heading: string): string {
  const text = readFileSync(markdownFile, 'utf8');
  const lines = text.split('\n');
  const start = lines.findIndex((l) => /^#{1,6}\s/.test(l) && l.replace(/^#+\s*/, '') === heading);
  if (start < 0) throw new Error(`${markdownFile}: no heading "${heading}"`);
  let i = start + 1;
  while (i < lines.length && !lines[i]!.startsWith('```')) {
    if (/^#{1,6}\s/.test(lines[i]!)) throw new Error(`${markdownFile}: no code under "${heading}"`);
    i += 1;
  }
  const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
  if (i >= lines.length || end < 0) throw new Error(`${markdownFile}: no code under "${heading}"`);
  return `${lines.slice(i + 1, end).join('\n')}\n`;
}
