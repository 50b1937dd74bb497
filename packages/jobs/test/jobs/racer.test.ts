import { eventually, runningGroupMembers } from '@zoott/testing';
import { describe, expect, it } from 'vitest';
import { runRacer } from '../../src/jobs/index.js';

const opts = { serverName: 'racer-host', killGraceMs: 300 };

describe('runRacer', () => {
  it('wins by writing output, before the process ends', async () => {
    const racer = runRacer(
      '/bin/sh',
      ['-c', 'read line; echo "found $line"; sleep 30'],
      'needle\n',
      opts,
    );
    expect(await racer.outcome).toEqual({ result: 'won', reason: 'output' });
    racer.kill();
    const run = await racer.done;
    expect(run.stdout).toBe('found needle\n');
    expect(run.stdin).toBe('needle\n');
    expect(run.signal).toBe(15);
  });

  it('loses when it ends normally without output', async () => {
    const racer = runRacer('/bin/sh', ['-c', 'exit 0'], '', opts);
    expect(await racer.outcome).toEqual({ result: 'lost', reason: 'normal' });
    expect((await racer.done).exit).toBe(0);
  });

  it('by default an exit with any code is a normal end: a silent exit 1 loses', async () => {
    const racer = runRacer('/bin/sh', ['-c', 'exit 1'], '', opts);
    expect(await racer.outcome).toEqual({ result: 'lost', reason: 'normal' });
    expect((await racer.done).exit).toBe(1);
  });

  it('wins by ending abnormally: a signal, or a non-zero exit when only 0 is normal', async () => {
    expect(
      await runRacer('/bin/sh', ['-c', 'exit 4'], '', { ...opts, normalExitCodes: [0] }).outcome,
    ).toEqual({
      result: 'won',
      reason: 'abnormal',
    });
    expect(await runRacer('/bin/sh', ['-c', 'kill -9 $$'], '', opts).outcome).toEqual({
      result: 'won',
      reason: 'abnormal',
    });
  });

  it('treats configured exit codes as normal', async () => {
    const racer = runRacer('/bin/sh', ['-c', 'exit 1'], '', { ...opts, normalExitCodes: [0, 1] });
    expect(await racer.outcome).toEqual({ result: 'lost', reason: 'normal' });
  });

  it('counts failing to start as an abnormal end', async () => {
    const racer = runRacer('no-such-racer-zoott', [], '', opts);
    expect(await racer.outcome).toEqual({ result: 'won', reason: 'abnormal' });
    expect((await racer.done).exit).toBe(127);
  });

  it('kill stops a silent racer and its group', async () => {
    const racer = runRacer('sleep', ['30'], '', opts);
    const pid = await racer.pid;
    expect(pid).toBeGreaterThan(0);
    racer.kill({ immediate: true });
    const run = await racer.done;
    expect(run.signal).toBe(9);
    expect(run.pid).toBe(pid);
    expect(await eventually(() => runningGroupMembers(run.pid).length === 0)).toBe(true);
  });
});
