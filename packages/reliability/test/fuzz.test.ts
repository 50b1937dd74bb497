/**
 * Fuzzing of the three parsers that read text other processes wrote: the path
 * codec (task key <-> pending name <-> tree path), the lock-id parser and the job parser.
 * Each either returns a value that round-trips, or throws a ZoottError with the right code;
 * nothing else ever escapes.
 */

import { isZoottError } from '@zoott/core';
import {
  decodeKey,
  encodeKey,
  keyToTreePath,
  parseEntryName,
  treePathToKey,
} from '@zoott/core/internal';
import { parseRegularJob, validateRegularJob } from '@zoott/core/jobs';
import { lockId, parseLockId } from '@zoott/core/recipes';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const RUNS = 2000;

/** Calls `f`; a throw must be a ZoottError with `code`, and is returned. */
function outcome<T>(f: () => T, code: string): { ok: true; value: T } | { ok: false } {
  try {
    return { ok: true, value: f() };
  } catch (err) {
    expect(isZoottError(err), `threw a non-ZoottError: ${String(err)}`).toBe(true);
    expect((err as { code: string }).code).toBe(code);
    expect((err as Error).message.length).toBeGreaterThan(0);
    return { ok: false };
  }
}

// Names that are valid: no whitespace, '/', '\', '|', control/surrogate/private-use chars.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is excluded
const FORBIDDEN = /[\s/\\|\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/;
const noNul = (s: string) => !s.includes('\u0000');
const validName = fc
  .string({ unit: 'grapheme-composite', minLength: 1, maxLength: 30 })
  .filter((s) => s !== '.' && s !== '..' && !FORBIDDEN.test(s));
const anyText = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc
    .array(fc.constantFrom('a', '|', '/', '-', '.', ' ', '\u0000', 'é', '\ud83d'), {
      maxLength: 40,
    })
    .map((a) => a.join('')),
);

describe('fuzz: path codec', () => {
  it('valid keys round-trip through the pending name and the tree path', () => {
    fc.assert(
      fc.property(fc.array(validName, { minLength: 1, maxLength: 32 }), (key) => {
        const encoded = encodeKey(key);
        expect(decodeKey(encoded)).toEqual(key);
        const path = keyToTreePath('fuzz', key);
        expect(treePathToKey('fuzz', path)).toEqual(key);
        // The pending entry name built from it parses back to the same key.
        const entry = parseEntryName(`q1000000-${encoded}-0000000042`);
        expect(entry?.encodedKey).toBe(encoded);
        expect(entry?.seq).toBe(42);
      }),
      { numRuns: RUNS },
    );
  });

  it('arbitrary pending names and paths decode to a valid key or INVALID_TASK, nothing else', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const d = outcome(() => decodeKey(text), 'INVALID_TASK');
        if (d.ok) expect(encodeKey(d.value)).toBe(text);
        const p = outcome(() => treePathToKey('fuzz', `/zoott_fuzz/${text}`), 'INVALID_TASK');
        if (p.ok) expect(keyToTreePath('fuzz', p.value)).toBe(`/zoott_fuzz/${text}`);
        const e = parseEntryName(text);
        if (e) expect(text).toBe(e.name);
      }),
      { numRuns: RUNS },
    );
  });

  it('keys deeper than the limit or with over-long names are refused with INVALID_TASK', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 33, max: 200 }),
        fc.integer({ min: 201, max: 5000 }),
        (depth, len) => {
          expect(
            outcome(() => encodeKey(Array.from({ length: depth }, () => 'a')), 'INVALID_TASK').ok,
          ).toBe(false);
          expect(outcome(() => encodeKey(['x'.repeat(len)]), 'INVALID_TASK').ok).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('fuzz: lock-id parser', () => {
  it('ids made by lockId parse back to their parts, for any node id', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 4_000_000 }),
        (node, pid) => {
          const host = { ipv4: ['10.1.2.3'], pid, mac: null };
          const id = lockId(node, host);
          const parsed = parseLockId(id);
          expect(parsed.nodeId).toBe(node);
          expect(parsed.ip).toBe('10.1.2.3');
          expect(parsed.processId).toBe(pid);
          expect(parsed.counter).not.toBeNull();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('arbitrary text parses without throwing, numbers only where they are numbers', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const p = parseLockId(text);
        expect(typeof p.nodeId).toBe('string');
        if (p.processId !== null)
          expect(Number.isSafeInteger(p.processId) || p.processId > 0).toBe(true);
        if (p.txid !== null) expect(p.nodeId.startsWith('txid:')).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('fuzz: job parser', () => {
  const jsonish = fc.oneof(
    anyText,
    fc.json({ maxDepth: 4 }),
    fc
      .record(
        {
          executable: fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.string())),
          arguments: fc.oneof(fc.array(fc.string()), fc.string(), fc.array(fc.integer())),
          stdin: fc.oneof(fc.string(), fc.integer()),
          timeoutMs: fc.oneof(fc.integer(), fc.double(), fc.string()),
          routingkey: fc.oneof(fc.string(), fc.integer()),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  );

  it('any message is a valid job that round-trips, or INVALID_JOB naming a field', () => {
    fc.assert(
      fc.property(jsonish, (text) => {
        const r = outcome(() => parseRegularJob(text), 'INVALID_JOB');
        if (r.ok) {
          expect(typeof r.value.executable).toBe('string');
          expect(validateRegularJob(JSON.parse(JSON.stringify(r.value)))).toEqual(r.value);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('well-formed jobs are accepted as they are', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 100 }).filter(noNul),
        fc.array(fc.string({ maxLength: 50 }).filter(noNul), { maxLength: 10 }),
        (executable, args) => {
          const job = { executable, arguments: args };
          const r = outcome(() => parseRegularJob(JSON.stringify(job)), 'INVALID_JOB');
          if (r.ok) expect(r.value).toMatchObject(job);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
