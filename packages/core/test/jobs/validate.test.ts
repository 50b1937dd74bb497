import { ZoottError } from '@zoott/core';
import {
  customProperties,
  DEFAULT_JOB_LIMITS,
  parseRaceJob,
  parseRegularJob,
  validateRaceJob,
  validateRegularJob,
} from '@zoott/core/jobs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

function jobError(fn: () => unknown): ZoottError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ZoottError) return err;
    throw err;
  }
  throw new Error('expected a ZoottError');
}

describe('regular jobs', () => {
  it('accepts the seed example and keeps custom properties', () => {
    const input = {
      executable: 'path/to/executable',
      arguments: ['extra', 'command', 'line', 'arguments'],
      stdin: 'data that should be sent to stdin',
      server: 'host1',
      filename: '/data/file',
      exchange: 'results',
      routingkey: 'tmp-queue',
      myId: 42,
      tags: { a: [1, 'x'] },
    };
    const job = validateRegularJob(input);
    expect(job).toEqual(input);
    expect(job).not.toBe(input);
    expect(customProperties(job, 'regular')).toEqual({ myId: 42, tags: { a: [1, 'x'] } });
  });

  it('reads dataset as a placement hint, not a custom property', () => {
    const job = validateRegularJob({ executable: 'ls', dataset: 'sales', tag: 1 });
    expect(job.dataset).toBe('sales');
    expect(customProperties(job, 'regular')).toEqual({ tag: 1 });
  });

  it('needs only an executable', () => {
    expect(validateRegularJob({ executable: 'ls' })).toEqual({ executable: 'ls' });
    expect(validateRegularJob({ executable: 'ls', timeoutMs: 1000 }).timeoutMs).toBe(1000);
    expect(validateRegularJob({ executable: 'cat', stdin: 'a\u0000b' }).stdin).toBe('a\u0000b');
  });

  it.each([
    [null, 'job', /must be a JSON object, got null/],
    [['ls'], 'job', /got an array/],
    [{}, 'executable', /is required/],
    [{ executable: 5 }, 'executable', /must be a string, got number/],
    [{ executable: '   ' }, 'executable', /must not be empty/],
    [{ executable: 'x'.repeat(4097) }, 'executable', /at most 4096/],
    [{ executable: 'ls\u0000' }, 'executable', /NUL/],
    [{ executable: 'ls', arguments: '-l' }, 'arguments', /must be an array of strings, got string/],
    [{ executable: 'ls', arguments: ['-l', 3] }, 'arguments[1]', /must be a string, got number/],
    [{ executable: 'ls', arguments: ['a\u0000'] }, 'arguments[0]', /NUL/],
    [{ executable: 'ls', stdin: {} }, 'stdin', /must be a string, got object/],
    [{ executable: 'ls', server: 1 }, 'server', /must be a string/],
    [{ executable: 'ls', filename: null }, 'filename', /got null/],
    [{ executable: 'ls', dataset: ['d'] }, 'dataset', /must be a string/],
    [{ executable: 'ls', exchange: [] }, 'exchange', /got an array/],
    [{ executable: 'ls', routingkey: true }, 'routingkey', /got boolean/],
    [{ executable: 'ls', timeoutMs: 0 }, 'timeoutMs', /from 1 to 2147483647, got 0/],
    [{ executable: 'ls', timeoutMs: 1.5 }, 'timeoutMs', /whole number/],
    [{ executable: 'ls', timeoutMs: '10' }, 'timeoutMs', /got "10"/],
    [{ executable: 'ls', timeoutMs: 2 ** 31 }, 'timeoutMs', /2147483647/],
    [{ executable: 'ls', stdout: 'x' }, 'stdout', /reserved for the result/],
    [{ executable: 'ls', exit: 0 }, 'exit', /reserved/],
    [{ executable: 'ls', truncated: true }, 'truncated', /reserved/],
    [{ executable: 'ls', mine: () => 1 }, 'mine', /not representable in JSON/],
    [{ executable: 'ls', mine: { n: Number.NaN } }, 'mine.n', /NaN/],
  ])('rejects %o (field %s)', (input, field, reason) => {
    const err = jobError(() => validateRegularJob(input));
    expect(err.code).toBe('INVALID_JOB');
    expect(err.field).toBe(field);
    expect(err.message).toMatch(reason);
  });

  it('rejects __proto__ as a custom property without touching prototypes', () => {
    const err = jobError(() => parseRegularJob('{"executable":"ls","__proto__":{"polluted":1}}'));
    expect(err.field).toBe('__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('bounds the echoed part and the argument count', () => {
    const big = 'x'.repeat(DEFAULT_JOB_LIMITS.maxEchoBytes);
    expect(jobError(() => validateRegularJob({ executable: 'ls', note: big })).message).toMatch(
      /echoed into the result/,
    );
    // A large stdin is not echoed in full, so it does not count.
    expect(() => validateRegularJob({ executable: 'cat', stdin: big })).not.toThrow();
    expect(
      jobError(() =>
        validateRegularJob({ executable: 'ls', arguments: ['a', 'b'] }, { maxArguments: 1 }),
      ).message,
    ).toMatch(/2 entries, more than the limit of 1/);
  });

  it('parses text and bytes, and reports bad JSON and oversize messages', () => {
    expect(parseRegularJob('{"executable":"ls"}')).toEqual({ executable: 'ls' });
    expect(parseRegularJob(new TextEncoder().encode('{"executable":"ls"}'))).toEqual({
      executable: 'ls',
    });
    const bad = jobError(() => parseRegularJob('{"executable":'));
    expect(bad.field).toBe('job');
    expect(bad.message).toMatch(/not valid JSON/);
    expect(jobError(() => parseRegularJob('"ls"')).message).toMatch(/got string/);
    expect(
      jobError(() => parseRegularJob('{"executable":"ls"}', { maxJobBytes: 5 })).message,
    ).toMatch(/19 bytes, more than the limit of 5/);
  });
});

describe('race jobs', () => {
  it('accepts an input array and a directory', () => {
    const job = validateRaceJob({
      executable: 'grep',
      arguments: ['needle'],
      input: [{ data: 'one', server: 'h1', filename: 'f1' }, { data: 'two' }],
      exchange: 'x',
      routingkey: 'k',
      requestId: 'r-1',
    });
    expect(job.input).toEqual([{ data: 'one', server: 'h1', filename: 'f1' }, { data: 'two' }]);
    expect(customProperties(job, 'race')).toEqual({ requestId: 'r-1' });
    expect(validateRaceJob({ executable: 'grep', input: 'tmp/race-1' }).input).toBe('tmp/race-1');
  });

  it.each([
    [{ executable: 'grep' }, 'input', /is required/],
    [{ executable: 'grep', input: [] }, 'input', /at least one racer/],
    [{ executable: 'grep', input: 5 }, 'input', /got number/],
    [{ executable: 'grep', input: '' }, 'input', /must not be empty/],
    [{ executable: 'grep', input: '/abs/dir' }, 'input', /relative/],
    [{ executable: 'grep', input: 'a/../../etc' }, 'input', /'\.\.'/],
    [{ executable: 'grep', input: ['x'] }, 'input[0]', /must be a JSON object, got string/],
    [
      { executable: 'grep', input: [{ data: 'a' }, { datga: 'b' }] },
      'input[1].datga',
      /unknown racer property/,
    ],
    [{ executable: 'grep', input: [{ server: 'h' }] }, 'input[0].data', /is required/],
    [{ executable: 'grep', input: [{ data: 1 }] }, 'input[0].data', /must be a string/],
    [{ executable: 'grep', input: [{ data: 'a', server: 2 }] }, 'input[0].server', /string/],
    [{ input: [{ data: 'a' }] }, 'executable', /is required/],
    [{ executable: 'grep', input: [{ data: 'a' }], winner: null }, 'winner', /reserved/],
    [{ executable: 'grep', input: [{ data: 'a' }], processes: 1 }, 'processes', /reserved/],
  ])('rejects %o (field %s)', (input, field, reason) => {
    const err = jobError(() => validateRaceJob(input));
    expect(err.code).toBe('INVALID_JOB');
    expect(err.field).toBe(field);
    expect(err.message).toMatch(reason);
  });

  it('bounds the number of racers', () => {
    const input = [{ data: 'a' }, { data: 'b' }, { data: 'c' }];
    expect(
      jobError(() => validateRaceJob({ executable: 'x', input }, { maxRacers: 2 })).message,
    ).toMatch(/3 racers, more than the limit of 2/);
    expect(parseRaceJob(JSON.stringify({ executable: 'x', input })).input).toHaveLength(3);
  });
});

describe('fuzzing', () => {
  const anyJson = fc.jsonValue({ maxDepth: 4 });
  const jobish = fc.record(
    {
      executable: fc.oneof(fc.string(), anyJson),
      arguments: fc.oneof(fc.array(fc.string()), anyJson),
      stdin: fc.oneof(fc.string(), anyJson),
      server: fc.oneof(fc.string(), anyJson),
      timeoutMs: fc.oneof(fc.integer(), fc.double(), anyJson),
      input: fc.oneof(
        fc.string(),
        fc.array(fc.record({ data: fc.oneof(fc.string(), anyJson) }, { requiredKeys: [] })),
        anyJson,
      ),
      stdout: anyJson,
      custom: fc.anything(),
    },
    { requiredKeys: [] },
  );

  const onlyZoottErrors = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(ZoottError);
      expect((err as ZoottError).code).toBe('INVALID_JOB');
      expect((err as ZoottError).field).toEqual(expect.any(String));
    }
  };

  it('never throws anything but INVALID_JOB on arbitrary values', () => {
    fc.assert(
      fc.property(fc.oneof(jobish, fc.anything()), (value) => {
        onlyZoottErrors(() => validateRegularJob(value));
        onlyZoottErrors(() => validateRaceJob(value));
      }),
      { numRuns: 1000 },
    );
  });

  it('never throws anything but INVALID_JOB on arbitrary text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          jobish.map((j) => JSON.stringify(j) ?? ''),
        ),
        (text) => {
          onlyZoottErrors(() => parseRegularJob(text));
          onlyZoottErrors(() => parseRaceJob(text));
          onlyZoottErrors(() => parseRegularJob(new TextEncoder().encode(text)));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('accepts every well-formed regular job unchanged', () => {
    const good = fc.record(
      {
        executable: fc
          .string({ minLength: 1 })
          .filter((s) => s.trim() !== '' && !s.includes('\u0000')),
        arguments: fc.array(fc.string().filter((s) => !s.includes('\u0000'))),
        stdin: fc.string(),
        routingkey: fc.string().filter((s) => !s.includes('\u0000')),
        myTag: fc.jsonValue({ maxDepth: 3 }),
      },
      { requiredKeys: ['executable'] },
    );
    fc.assert(
      fc.property(good, (job) => {
        const parsed = parseRegularJob(JSON.stringify(job));
        expect(parsed).toEqual(JSON.parse(JSON.stringify(job)));
      }),
      { numRuns: 300 },
    );
  });
});
