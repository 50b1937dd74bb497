import { describe, expect, it } from 'vitest';
import { amqpResult, bridgedJob, ENVELOPE, taskNameOf, yothalotTime } from '../src/index.js';

const bytes = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('messages into jobs', () => {
  it('moves the address into the envelope and keeps custom properties', () => {
    const b = bridgedJob(
      'regular',
      bytes({ executable: 'wc', exchange: 'ex', routingkey: 'rk', ticket: 7 }),
    );
    expect(b.address).toEqual({ exchange: 'ex', routingkey: 'rk' });
    expect(b.job).toEqual({
      executable: 'wc',
      ticket: 7,
      [ENVELOPE]: { exchange: 'ex', routingkey: 'rk' },
    });
    expect(b.name).toMatch(/^amqp-job-[0-9a-f]{40}$/);
  });

  it('a job without a routing key has no address, and keeps an exchange as it was', () => {
    const b = bridgedJob('regular', bytes({ executable: 'wc', exchange: 'ex' }));
    expect(b.address).toBeNull();
    expect(b.job).toEqual({ executable: 'wc', exchange: 'ex' });
  });

  it('derives the task name from the message id, else from the body; the kind is part of it', () => {
    const body = bytes({ executable: 'wc' });
    expect(taskNameOf('regular', body)).toBe(taskNameOf('regular', bytes({ executable: 'wc' })));
    expect(taskNameOf('regular', body)).not.toBe(
      taskNameOf('regular', bytes({ executable: 'ls' })),
    );
    expect(taskNameOf('regular', body, 'm-1')).toBe(taskNameOf('regular', bytes('other'), 'm-1'));
    expect(taskNameOf('regular', body, 'm-1')).not.toBe(taskNameOf('regular', body, 'm-2'));
    expect(taskNameOf('race', body)).toMatch(/^amqp-race-/);
    expect(taskNameOf('race', body)).not.toBe(
      taskNameOf('regular', body).replace('-job-', '-race-'),
    );
  });

  it('refuses what is malformed, naming it', () => {
    expect(() => bridgedJob('regular', bytes('nope'))).toThrow(/not valid JSON/);
    expect(() => bridgedJob('regular', bytes({ arguments: [] }))).toThrow(/executable/);
    expect(() => bridgedJob('regular', bytes({ executable: 'x', arguments: 'a' }))).toThrow(
      /arguments/,
    );
    expect(() => bridgedJob('race', bytes({ executable: 'x' }))).toThrow(/input/);
    expect(() => bridgedJob('regular', bytes({ executable: 'x', [ENVELOPE]: {} }))).toThrow(
      /reserved for the AMQP bridge/,
    );
  });
});

describe('results out', () => {
  it("Yothalot's time format, in UTC; anything else untouched", () => {
    expect(yothalotTime('2015-11-01T23:22:11.123Z')).toBe('2015-11-01 23:22:11');
    expect(yothalotTime('2015-11-01T23:22:11Z')).toBe('2015-11-01 23:22:11');
    expect(yothalotTime('yesterday')).toBe('yesterday');
    expect(yothalotTime(5)).toBe(5);
  });

  it('puts the address back, drops the envelope, converts the times of a race and its winner', () => {
    const out = amqpResult({
      executable: 'grep',
      arguments: [],
      exchange: 'zoott~amqp',
      routingkey: 'jobs',
      [ENVELOPE]: { exchange: 'ex', routingkey: 'rk' },
      winner: {
        stdout: 'x',
        exit: 0,
        started: '2015-11-01T23:22:11.000Z',
        finished: '2015-11-01T23:22:17.900Z',
      },
      processes: 3,
      started: '2015-11-01T23:21:08.000Z',
      finished: '2015-11-01T23:22:17.950Z',
      tag: 1,
    });
    expect(out?.address).toEqual({ exchange: 'ex', routingkey: 'rk' });
    expect(out?.body).toEqual({
      executable: 'grep',
      arguments: [],
      exchange: 'ex',
      routingkey: 'rk',
      winner: {
        stdout: 'x',
        exit: 0,
        started: '2015-11-01 23:22:11',
        finished: '2015-11-01 23:22:17',
      },
      processes: 3,
      started: '2015-11-01 23:21:08',
      finished: '2015-11-01 23:22:17',
      tag: 1,
    });
  });

  it('a routing key alone goes to the default exchange; a result without envelope is not forwarded', () => {
    const out = amqpResult({ executable: 'x', [ENVELOPE]: { routingkey: 'q' }, exit: 0 });
    expect(out?.address).toEqual({ routingkey: 'q' });
    expect(out?.body).not.toHaveProperty('exchange');
    expect(amqpResult({ executable: 'x', exit: 0 })).toBeNull();
    expect(amqpResult('text')).toBeNull();
  });
});
