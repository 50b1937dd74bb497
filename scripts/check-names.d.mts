// Types of check-names.mjs, for the TypeScript tests that use it.
export interface ShortName {
  file: string;
  line: number;
  name: string;
  kind: 'variable' | 'parameter' | 'catch' | 'declaration';
}

/** A file or folder inside a covered folder, not held to the check yet. */
export interface NotYet {
  file: string;
  why: string;
}

export const COVERED: string[];
export const NOT_YET: NotYet[];
export function shortNames(file: string, text: string): ShortName[];
export function isCovered(
  file: string,
  folders?: readonly string[],
  notYet?: readonly NotYet[],
): boolean;
export function checkNames(
  root?: string,
  options?: { all?: boolean; folders?: readonly string[]; notYet?: readonly NotYet[] },
): ShortName[];
export function countByPackage(findings: readonly ShortName[]): Array<[string, number]>;
