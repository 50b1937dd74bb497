// Types of check-sizes.mjs, for the TypeScript tests that use it.
export const ROOT: string;
export const MAX_FILE_LINES: number;
export const MAX_FUNCTION_LINES: number;

export interface SizeException {
  /** Relative to the repository root, e.g. `packages/core/src/engine/worker.ts`. */
  file: string;
  /** A function as findings name it (`Class.method`); absent for the file's own length. */
  name?: string;
  /** Must appear in the README.md of the package holding `file`. */
  reason: string;
}

export interface SizeFinding {
  file: string;
  name: string | undefined;
  kind: 'file' | 'function';
  lines: number;
  limit: number;
}

export const EXCEPTIONS: SizeException[];
export function sourceFiles(root: string): string[];
export function measureFile(file: string, text: string): SizeFinding[];
export function checkSizes(
  root?: string,
  exceptions?: readonly SizeException[],
): {
  violations: SizeFinding[];
  excused: SizeFinding[];
  badExceptions: Array<SizeException & { problem: string }>;
};
