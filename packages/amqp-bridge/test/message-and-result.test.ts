import { describe, expect, it } from 'vitest';
import {
  addressProblem,
  amqpResult,
  bridgedJob,
  ENVELOPE,
  fingerprintOf,
  freshTaskName,
  readableAddress,
  replyExchangePolicy,
  yothalotTime,
} from '../src/index.js';

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
    expect(b.fingerprint).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a job without a routing key has no address, and keeps an exchange as it was', () => {
    const b = bridgedJob('regular', bytes({ executable: 'wc', exchange: 'ex' }));
    expect(b.address).toBeNull();
    expect(b.job).toEqual({ executable: 'wc', exchange: 'ex' });
  });

  it('fingerprints a message by its kind, message id and body; every first delivery gets a task of its own', () => {
    const body = bytes({ executable: 'wc' });
    const fp = fingerprintOf('regular', body);
    expect(fp).toBe(fingerprintOf('regular', bytes({ executable: 'wc' })));
    expect(fp).not.toBe(fingerprintOf('regular', bytes({ executable: 'ls' })));
    expect(fingerprintOf('regular', body, 'm-1')).not.toBe(fingerprintOf('regular', body, 'm-2'));
    expect(fingerprintOf('regular', body, 'm-1')).not.toBe(fp);
    expect(fingerprintOf('race', body)).not.toBe(fp);
    // Identical posts share the fingerprint, never the task.
    const a = freshTaskName('regular', fp);
    const b = freshTaskName('regular', fp);
    expect(a).not.toBe(b);
    expect(a).toMatch(new RegExp(`^amqp-job-${fp.slice(0, 12)}-[0-9a-f]{16}$`));
    expect(freshTaskName('race', fp)).toMatch(/^amqp-race-/);
  });

  it('reads the address of a message it refuses, when there is one to answer', () => {
    expect(readableAddress(bytes({ executable: 5, routingkey: 'rk', exchange: 'ex' }))).toEqual({
      raw: { executable: 5, routingkey: 'rk', exchange: 'ex' },
      address: { routingkey: 'rk', exchange: 'ex' },
    });
    expect(readableAddress(bytes({ routingkey: 'rk' }))?.address).toEqual({ routingkey: 'rk' });
    expect(readableAddress(bytes('not json'))).toBeNull();
    expect(readableAddress(bytes([{ routingkey: 'rk' }]))).toBeNull();
    expect(readableAddress(bytes({ routingkey: 7 }))).toBeNull();
    expect(readableAddress(bytes({ routingkey: 'rk', exchange: 1 }))).toBeNull();
  });

  it('--reply-exchanges patterns: globs, "" for the default exchange, none for any', () => {
    const any = replyExchangePolicy(undefined);
    expect(any('amq.rabbitmq.trace') && any('')).toBe(true);
    const some = replyExchangePolicy(['results', 'res.*', 'r?', '""']);
    expect(['results', 'res.a', 'res.', 'rx', ''].map(some)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['results2', 'resa', 'r', 'rxy', 'other'].map(some)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(replyExchangePolicy(['*'])('')).toBe(true);
    expect(replyExchangePolicy(['results'])('')).toBe(false);
    // Pattern text is literal apart from * and ?.
    expect(replyExchangePolicy(['a.b'])('axb')).toBe(false);
  });

  it('says why a result cannot go to an address: not allowed, or a name over 255 bytes', () => {
    const only = replyExchangePolicy(['results']);
    expect(addressProblem({ exchange: 'results', routingkey: 'rk' }, only)).toBeNull();
    expect(addressProblem({ exchange: 'other', routingkey: 'rk' }, only)).toMatch(
      /exchange "other" is not one of --reply-exchanges/,
    );
    expect(addressProblem({ routingkey: 'rk' }, only)).toMatch(/the default exchange/);
    const any = replyExchangePolicy(undefined);
    expect(addressProblem({ routingkey: 'é'.repeat(128) }, any)).toMatch(/256 bytes/);
    expect(addressProblem({ routingkey: 'k'.repeat(255) }, any)).toBeNull();
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
