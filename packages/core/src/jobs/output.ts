/**
 * Output capping. Sizes are counted the way the output will be stored: as the UTF-8 bytes
 * of its JSON string encoding (without the quotes), so escapes such as `\n` or `\u0001`
 * count for what they really take in the result node.
 */

/** Default cap for a whole result JSON: a quarter of ZooKeeper's ~1 MB node limit. */
export const DEFAULT_MAX_RESULT_BYTES = 256 * 1024;

/** Bytes the UTF-16 unit at `i` (with its pair) takes in JSON, and how many units it spans. */
function unitCost(s: string, i: number): [bytes: number, units: number] {
  const c = s.charCodeAt(i);
  if (c === 0x22 || c === 0x5c) return [2, 1]; // \" and \\
  if (c < 0x20) return [c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6, 1];
  if (c < 0x80) return [1, 1];
  if (c < 0x800) return [2, 1];
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = s.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return [4, 2];
    return [6, 1]; // JSON.stringify escapes a lone surrogate as \udXXX
  }
  if (c >= 0xdc00 && c <= 0xdfff) return [6, 1];
  return [3, 1];
}

/** UTF-8 bytes of `JSON.stringify(s)` minus its two quotes. */
export function jsonStringBytes(s: string): number {
  let total = 0;
  for (let i = 0; i < s.length; ) {
    const [bytes, units] = unitCost(s, i);
    total += bytes;
    i += units;
  }
  return total;
}

/**
 * The longest prefix of `s` whose JSON encoding fits in `maxBytes`. Never splits a
 * surrogate pair.
 */
export function truncateToJsonBytes(s: string, maxBytes: number): string {
  let total = 0;
  let i = 0;
  while (i < s.length) {
    const [bytes, units] = unitCost(s, i);
    if (total + bytes > maxBytes) break;
    total += bytes;
    i += units;
  }
  return s.slice(0, i);
}

/** Process output cut to a byte cap, with whether it was cut. */
export interface CappedOutput {
  stdout: string;
  stderr: string;
  /** Whether either stream was shortened. */
  truncated: boolean;
}

/**
 * Shortens stdout and stderr (keeping their beginnings) so that together their JSON
 * encodings take at most `maxBytes`. When both do not fit, each gets half the budget, and
 * a stream that needs less than its half leaves the rest to the other.
 */
export function capOutput(stdout: string, stderr: string, maxBytes: number): CappedOutput {
  const budget = Math.max(0, Math.floor(maxBytes));
  const out = jsonStringBytes(stdout);
  const err = jsonStringBytes(stderr);
  if (out + err <= budget) return { stdout, stderr, truncated: false };
  const half = Math.floor(budget / 2);
  let outBudget: number;
  let errBudget: number;
  if (out <= half) {
    outBudget = out;
    errBudget = budget - out;
  } else if (err <= half) {
    errBudget = err;
    outBudget = budget - err;
  } else {
    errBudget = half;
    outBudget = budget - half;
  }
  return {
    stdout: truncateToJsonBytes(stdout, outBudget),
    stderr: truncateToJsonBytes(stderr, errBudget),
    truncated: true,
  };
}
