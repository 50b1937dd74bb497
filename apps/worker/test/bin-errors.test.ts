import { ZoottError } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { exitCodeOf, WorkerExit } from '../src/bin-errors.js';

describe('zoott-worker start-up errors: exit code and hint', () => {
  it('a server that cannot be reached: exit 3, check the address', () => {
    for (const code of ['NO_ZOOKEEPER', 'CONNECTION_LOSS', 'OPERATION_TIMEOUT'] as const) {
      const out = exitCodeOf(new ZoottError(code, 'x'));
      expect(out.code).toBe(WorkerExit.UNREACHABLE);
      expect(out.hint).toMatch(/is ZooKeeper running there\?/);
    }
  });

  it('a session lost while starting: exit 3, but no doubt cast on the address', () => {
    const out = exitCodeOf(new ZoottError('SESSION_EXPIRED', 'x'));
    expect(out.code).toBe(WorkerExit.UNREACHABLE);
    expect(out.hint).toMatch(/session was lost while starting/);
    expect(out.hint).not.toMatch(/running there/);
  });

  it('credentials, an uninitialised world and anything else', () => {
    expect(exitCodeOf(new ZoottError('NO_AUTH', 'x')).code).toBe(WorkerExit.AUTH);
    expect(exitCodeOf(new ZoottError('WORLD_NOT_INITIALISED', 'x')).code).toBe(
      WorkerExit.NOT_FOUND,
    );
    expect(exitCodeOf(new Error('bad handlers module')).code).toBe(WorkerExit.CONFIG);
  });
});
