import { readFileSync } from 'node:fs';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

/**
 * Reads a JSON value given inline (`'{"url":"x"}'`) or from a file (`@data.json`, `@-` for
 * stdin). `what` names the option in errors.
 */
export function readJsonArg(text: string, what: string): unknown {
  const fromFile = text.startsWith('@');
  const source = fromFile ? text.slice(1) : null;
  const body = source === null ? text : readFileSync(source === '-' ? 0 : source, 'utf8');
  try {
    return JSON.parse(body);
  } catch (err) {
    throw new CliError(
      `${what}${source !== null ? ` (file ${source})` : ''} is not valid JSON: ${(err as Error).message}`,
      ExitCode.USAGE,
      fromFile
        ? 'the file must hold one JSON value'
        : `quote JSON for the shell, e.g. ${what} '{"url":"http://x"}' or ${what} '"plain text"', or read a file with ${what} @file.json`,
    );
  }
}

/** A whole number option in [min, max], or a CliError naming the option. */
export function intOption(
  value: string | undefined,
  name: string,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max)
    throw new CliError(`${name} ${value}: must be a whole number in [${min}, ${max}]`);
  return number;
}
