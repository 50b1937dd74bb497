import { ZoottError } from '@zoott/core';
import {
  buildRaceResult,
  buildRegularResult,
  capOutput,
  DEFAULT_MAX_RESULT_BYTES,
  formatJobTime,
  jsonStringBytes,
  type ProcessRun,
  truncateToJsonBytes,
  validateRaceJob,
  validateRegularJob,
} from '@zoott/core/jobs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;
const started = new Date('2015-11-01T23:22:11.000Z');
const finished = new Date('2015-11-01T23:22:17.250Z');

const run = (over: Partial<ProcessRun> = {}): ProcessRun => ({
  stdout: 'out',
  stderr: 'err',
  server: 'worker-host',
  pid: 1234,
  exit: 0,
  started,
  finished,
  ...over,
});

describe('JSON size helpers', () => {
  it('counts what JSON.stringify produces', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(jsonStringBytes(s)).toBe(bytes(s) - 2);
      }),
      { numRuns: 500 },
    );
  });

  it('counts escapes and lone surrogates like JSON.stringify', () => {
    for (const s of ['\ud800x\udc00', 'a"b\\c', '\u0001\n\t', '\u2028é€😀']) {
      expect(jsonStringBytes(s)).toBe(bytes(s) - 2);
    }
  });

  it('truncates to the longest fitting prefix without splitting a pair', () => {
    expect(truncateToJsonBytes('abc', 2)).toBe('ab');
    expect(truncateToJsonBytes('a😀', 4)).toBe('a');
    expect(truncateToJsonBytes('a😀', 5)).toBe('a😀');
    expect(truncateToJsonBytes('\n\n', 3)).toBe('\n');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.nat(200), (s, max) => {
        const t = truncateToJsonBytes(s, max);
        expect(s.startsWith(t)).toBe(true);
        expect(jsonStringBytes(t)).toBeLessThanOrEqual(max);
        if (t.length < s.length) {
          const next = s.codePointAt(t.length)! > 0xffff ? 2 : 1;
          expect(jsonStringBytes(s.slice(0, t.length + next))).toBeGreaterThan(max);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('capOutput', () => {
  it('leaves output that fits alone', () => {
    expect(capOutput('out', 'err', 6)).toEqual({ stdout: 'out', stderr: 'err', truncated: false });
  });

  it('splits the budget, giving unused room to the other stream', () => {
    expect(capOutput('a'.repeat(100), 'b'.repeat(100), 10)).toEqual({
      stdout: 'aaaaa',
      stderr: 'bbbbb',
      truncated: true,
    });
    expect(capOutput('a'.repeat(100), 'bb', 10)).toEqual({
      stdout: 'a'.repeat(8),
      stderr: 'bb',
      truncated: true,
    });
    expect(capOutput('', 'b'.repeat(100), 10).stderr).toBe('b'.repeat(10));
    expect(capOutput('abc', 'def', 0)).toEqual({ stdout: '', stderr: '', truncated: true });
  });

  it('always fits the budget and keeps prefixes', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.nat(100), (o, e, max) => {
        const c = capOutput(o, e, max);
        expect(jsonStringBytes(c.stdout) + jsonStringBytes(c.stderr)).toBeLessThanOrEqual(max);
        expect(o.startsWith(c.stdout) && e.startsWith(c.stderr)).toBe(true);
        expect(c.truncated).toBe(c.stdout !== o || c.stderr !== e);
      }),
    );
  });
});

describe('buildRegularResult', () => {
  const job = validateRegularJob({
    executable: '/bin/echo',
    arguments: ['hi'],
    stdin: 'in',
    server: 'hint-host',
    filename: 'f',
    exchange: 'x',
    routingkey: 'k',
    myId: 'abc',
  });

  it('echoes the job, replaces server, adds the run', () => {
    expect(buildRegularResult(job, run())).toEqual({
      executable: '/bin/echo',
      arguments: ['hi'],
      stdin: 'in',
      filename: 'f',
      exchange: 'x',
      routingkey: 'k',
      myId: 'abc',
      stdout: 'out',
      stderr: 'err',
      server: 'worker-host',
      pid: 1234,
      exit: 0,
      started: '2015-11-01T23:22:11.000Z',
      finished: '2015-11-01T23:22:17.250Z',
    });
  });

  it('reports exit XOR signal, and the zoott flags', () => {
    const killed = buildRegularResult(job, run({ exit: null, signal: 9, timedOut: true }));
    expect(killed.signal).toBe(9);
    expect('exit' in killed).toBe(false);
    expect(killed.timedOut).toBe(true);
    const both = buildRegularResult(job, run({ exit: 1, signal: 15 }));
    expect([both.signal, 'exit' in both]).toEqual([15, false]);
    const exited = buildRegularResult({ executable: 'true' }, run({ exit: 3 }));
    expect([exited.exit, 'signal' in exited, exited.arguments, exited.stdin]).toEqual([
      3,
      false,
      [],
      '',
    ]);
    expect(buildRegularResult(job, run({ truncated: true })).truncated).toBe(true);
    // Never started: whatever code the runner kept (a shell's 127), no exit and no signal.
    const failed = buildRegularResult(job, run({ pid: 0, exit: 127, error: 'spawn nope ENOENT' }));
    expect(failed.error).toBe('spawn nope ENOENT');
    expect(failed).not.toHaveProperty('exit');
    expect(failed).not.toHaveProperty('signal');
    expect(failed.pid).toBe(0);
    const noCode = buildRegularResult(job, run({ pid: 0, exit: undefined, error: 'refused' }));
    expect(noCode).not.toHaveProperty('exit');
    expect(() => buildRegularResult(job, run({ exit: undefined }))).toThrow(ZoottError);
  });

  it('keeps the whole result under the byte cap and marks truncation', () => {
    const huge = 'x'.repeat(DEFAULT_MAX_RESULT_BYTES);
    const result = buildRegularResult(job, run({ stdout: huge, stderr: huge }));
    expect(bytes(result)).toBeLessThanOrEqual(DEFAULT_MAX_RESULT_BYTES);
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBeGreaterThan(DEFAULT_MAX_RESULT_BYTES / 2 - 1000);
    expect(result.stdin).toBe('');
    expect(result.myId).toBe('abc');
  });

  it('fits any output, stdin and cap', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.string({ maxLength: 300 }),
        fc.integer({ min: 400, max: 1200 }),
        (stdout, stderr, stdin, maxBytes) => {
          const result = buildRegularResult({ executable: 'x', stdin }, run({ stdout, stderr }), {
            maxBytes,
          });
          expect(bytes(result)).toBeLessThanOrEqual(maxBytes);
          const whole =
            result.stdout === stdout && result.stderr === stderr && result.stdin === stdin;
          expect(result.truncated === true).toBe(!whole);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses when even an empty result exceeds the cap', () => {
    const err = (() => {
      try {
        buildRegularResult(job, run(), { maxBytes: 50 });
      } catch (e) {
        return e as ZoottError;
      }
      return null;
    })();
    expect(err?.code).toBe('DATA_TOO_LARGE');
  });
});

describe('buildRaceResult', () => {
  const job = validateRaceJob({
    executable: 'grep',
    arguments: ['needle'],
    input: [{ data: 'a' }, { data: 'b' }],
    exchange: 'x',
    routingkey: 'k',
    ticket: 7,
  });

  it('reports the winner and drops input', () => {
    const result = buildRaceResult(job, {
      winner: { ...run({ stdout: 'found' }), stdin: 'b' },
      processes: 2,
      started,
      finished,
    });
    expect(result).toEqual({
      executable: 'grep',
      arguments: ['needle'],
      exchange: 'x',
      routingkey: 'k',
      ticket: 7,
      winner: {
        stdin: 'b',
        stdout: 'found',
        stderr: 'err',
        server: 'worker-host',
        pid: 1234,
        exit: 0,
        started: '2015-11-01T23:22:11.000Z',
        finished: '2015-11-01T23:22:17.250Z',
      },
      processes: 2,
      started: '2015-11-01T23:22:11.000Z',
      finished: '2015-11-01T23:22:17.250Z',
    });
  });

  it('reports no winner as null and caps a winner', () => {
    expect(
      buildRaceResult(job, { winner: null, processes: 2, started, finished }).winner,
    ).toBeNull();
    const capped = buildRaceResult(
      job,
      {
        winner: { ...run({ stdout: 'y'.repeat(5000) }), stdin: 'a' },
        processes: 1,
        started,
        finished,
      },
      { maxBytes: 1000 },
    );
    expect(bytes(capped)).toBeLessThanOrEqual(1000);
    expect(capped.winner?.truncated).toBe(true);
  });
});

describe('formatJobTime', () => {
  it('writes ISO 8601 UTC and rejects invalid dates', () => {
    expect(formatJobTime(started)).toBe('2015-11-01T23:22:11.000Z');
    expect(() => formatJobTime(new Date(Number.NaN))).toThrow(/not a valid time/);
  });
});
