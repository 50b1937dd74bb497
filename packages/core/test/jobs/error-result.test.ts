import { raceErrorResult, regularErrorResult } from '@zoott/core/jobs';
import { describe, expect, it } from 'vitest';

const at = new Date('2015-11-01T23:22:11.000Z');

describe('error results: a job that never ran still answers in the result format', () => {
  it('a regular job: the spec fields with an empty run, no exit or signal, error saying why', () => {
    const r = regularErrorResult(
      {
        executable: '/bin/x',
        arguments: ['a'],
        stdin: 'big input',
        server: 'hint',
        exchange: 'ex',
        routingkey: 'rk',
        ticket: 7,
      },
      { error: 'refused', server: 'bridge-1', at },
    );
    expect(r).toEqual({
      executable: '/bin/x',
      arguments: ['a'],
      exchange: 'ex',
      routingkey: 'rk',
      ticket: 7,
      stdin: '',
      stdout: '',
      stderr: '',
      server: 'bridge-1',
      pid: 0,
      started: '2015-11-01T23:22:11.000Z',
      finished: '2015-11-01T23:22:11.000Z',
      error: 'refused',
    });
  });

  it('a malformed job passes on none of the fields a result sets itself', () => {
    const r = regularErrorResult(
      { executable: 5, arguments: 'x', exit: 0, signal: 9, stdout: 'forged', winner: {} },
      { error: 'bad', server: 's', at },
    );
    expect(r).not.toHaveProperty('exit');
    expect(r).not.toHaveProperty('signal');
    expect(r).not.toHaveProperty('winner');
    expect(r).toMatchObject({ executable: 5, arguments: [], stdout: '', error: 'bad' });
    expect(regularErrorResult('not an object', { error: 'e', server: 's', at })).toMatchObject({
      arguments: [],
      error: 'e',
    });
  });

  it('a race: its fields without input, winner null, no processes', () => {
    const r = raceErrorResult(
      { executable: 'grep', input: [{ data: 'x' }], routingkey: 'rk', processes: 9, tag: 'a' },
      { error: 'input: unknown property datga', server: 's', at },
    );
    expect(r).toEqual({
      executable: 'grep',
      arguments: [],
      routingkey: 'rk',
      tag: 'a',
      winner: null,
      processes: 0,
      started: '2015-11-01T23:22:11.000Z',
      finished: '2015-11-01T23:22:11.000Z',
      error: 'input: unknown property datga',
    });
  });
});
