/**
 * Output capping. Sizes are counted the way the output will be stored: as the UTF-8 bytes
 * of its JSON string encoding (without the quotes), so escapes such as `\n` or `\u0001`
 * count for what they really take in the result node.
 */

/** Default cap for a whole result JSON: a quarter of ZooKeeper's ~1 MB node limit. */
export const DEFAULT_MAX_RESULT_BYTES = 256 * 1024;

/** Bytes the UTF-16 unit at `index` (with its pair) takes in JSON, and how many units it spans. */
function unitCost(text: string, index: number): [bytes: number, units: number] {
  const code = text.charCodeAt(index);
  if (code === 0x22 || code === 0x5c) return [2, 1]; // \" and \\
  if (code < 0x20)
    return [code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6, 1];
  if (code < 0x80) return [1, 1];
  if (code < 0x800) return [2, 1];
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return [4, 2];
    return [6, 1]; // JSON.stringify escapes a lone surrogate as \udXXX
  }
  if (code >= 0xdc00 && code <= 0xdfff) return [6, 1];
  return [3, 1];
}

/** UTF-8 bytes of `JSON.stringify(s)` minus its two quotes. */
export function jsonStringBytes(text: string): number {
  let total = 0;
  for (let i = 0; i < text.length; ) {
    const [bytes, units] = unitCost(text, i);
    total += bytes;
    i += units;
  }
  return total;
}

/**
 * The longest prefix of `text` whose JSON encoding fits in `maxBytes`. Never splits a
 * surrogate pair.
 */
export function truncateToJsonBytes(text: string, maxBytes: number): string {
  let total = 0;
  let index = 0;
  while (index < text.length) {
    const [bytes, units] = unitCost(text, index);
    if (total + bytes > maxBytes) break;
    total += bytes;
    index += units;
  }
  return text.slice(0, index);
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
