import { describe, expect, it } from 'vitest';
import { type Candidate, spreadStart } from '../../src/claim/candidate.js';

/** Candidates in claim order: `counts[i]` of priority `counts.length - i`. */
function ordered(...counts: number[]): Candidate[] {
  return counts.flatMap((n, i) =>
    Array.from({ length: n }, () => ({ priority: counts.length - i }) as unknown as Candidate),
  );
}

describe('engine: where a steal starts among its candidates', () => {
  it('starts at the head while the best class is short, as an owner does', () => {
    for (const r of [0, 0.5, 0.999]) {
      expect(spreadStart(ordered(16, 100), 4, r)).toBe(0);
      expect(spreadStart(ordered(3), 4, r)).toBe(0);
      expect(spreadStart([], 4, r)).toBe(0);
    }
  });

  it('spreads over the whole best class when it is long, never past it', () => {
    const c = ordered(100, 500);
    expect(spreadStart(c, 4, 0)).toBe(0);
    expect(spreadStart(c, 4, 0.5)).toBe(48);
    // The last start still claims four of the best class.
    expect(spreadStart(c, 4, 0.9999)).toBe(96);
    const starts = new Set(Array.from({ length: 200 }, (_, i) => spreadStart(c, 4, i / 200)));
    expect(starts.size).toBeGreaterThan(90);
  });
});
