import fc from 'fast-check';

// Characters a valid name may hold: a mix of ASCII, Latin-1 and other BMP characters
// outside every range the name rules forbid, plus the separators' neighbours.
const nameChar = fc.oneof(
  fc.constantFrom(...'abcXYZ019_-.:~+=,;!@#$%^&*()[]{}<>?\'"`'.split('')),
  fc.integer({ min: 0xa1, max: 0x17f }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x4e00, max: 0x4e20 }).map((c) => String.fromCharCode(c)),
);

/** Any valid task name (never `.`/`..`). */
export const validName = fc
  .array(nameChar, { minLength: 1, maxLength: 20 })
  .map((cs) => cs.join(''))
  .filter((n) => n !== '.' && n !== '..');

/** Any valid key with 1..8 names. */
export const validKey = fc.array(validName, { minLength: 1, maxLength: 8 });

/** A valid world name. */
export const validWorld = validName.filter(
  (w) => !['p', 'w', 'c', 'f', 'r', 'q', 'workers', 'schedules', 'leaders', 'limits'].includes(w),
);
