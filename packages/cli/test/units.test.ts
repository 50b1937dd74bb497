import { ZoottError } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { jobExitCode } from '../src/commands/submit.js';
import { parseConfig } from '../src/config.js';
import { resolveSettings } from '../src/connection.js';
import { CliError, explain } from '../src/errors.js';
import { templateFunctor } from '../src/name-template.js';
import { renderTable } from '../src/output/table.js';
import { parseTaskRef } from '../src/task-ref.js';

describe('task references', () => {
  it('reads keys and paths alike', () => {
    expect(parseTaskRef('a|b|c')).toEqual(['a', 'b', 'c']);
    expect(parseTaskRef('a/b/c')).toEqual(['a', 'b', 'c']);
    expect(parseTaskRef('/a/b/')).toEqual(['a', 'b']);
    expect(() => parseTaskRef('a||b')).toThrow(CliError);
    expect(() => parseTaskRef('  ')).toThrow(/empty/);
  });
});

describe('child-name templates', () => {
  it('fills in name, parent and capture groups', () => {
    expect(templateFunctor('dl_{1}', 'req_(.*)')('req_alpha', 'dl')).toBe('dl_alpha');
    expect(templateFunctor('{name}-{parent}')('p', 'c')).toBe('c-p');
    expect(() => templateFunctor('{bogus}')).toThrow(/unknown token \{bogus\}/);
    expect(() => templateFunctor('x_{1}')).toThrow(/capture groups/);
  });
});

describe('settings', () => {
  it('takes flag over env over config file', () => {
    const env = { ZOOTT_CONNECT: 'env:1', ZOOTT_WORLD: 'envw', ZOOTT_CONFIG: undefined };
    const s = resolveSettings({ connect: 'flag:1' }, env, '/nonexistent');
    expect(s).toMatchObject({ connect: 'flag:1', connectFrom: 'flag', world: 'envw' });
    expect(resolveSettings({}, {}, '/nonexistent')).toMatchObject({
      connect: null,
      world: 'default',
    });
    expect(() => resolveSettings({ auth: 'nocolon' }, {}, '/nonexistent')).toThrow(/user:password/);
    // One credential syntax for both tools: the scheme may be spelt out.
    expect(resolveSettings({ auth: 'digest:al:p:w' }, {}, '/nonexistent').auth).toEqual(['al:p:w']);
    expect(resolveSettings({}, { ZOOTT_AUTH: 'a:1,b:2' }, '/nonexistent').auth).toEqual([
      'a:1',
      'b:2',
    ]);
    expect(() => resolveSettings({ world: 'x~races' }, {}, '/nonexistent')).toThrow(
      /internal worlds/,
    );
  });

  it('checks config files', () => {
    expect(parseConfig('connect: h:1/app\nconnectTimeout: 3\n', 'c.yaml')).toEqual({
      connect: 'h:1/app',
      connectTimeout: 3,
    });
    expect(() => parseConfig('conect: x', 'c.yaml')).toThrow(/unknown key "conect"/);
    expect(() => parseConfig('world: 3', 'c.yaml')).toThrow(/world must be a string/);
    expect(parseConfig('', 'c.yaml')).toEqual({});
  });
});

describe('errors and exit codes', () => {
  it('maps error codes to exit codes with hints', () => {
    expect(explain(new ZoottError('CONNECTION_LOSS')).exitCode).toBe(3);
    expect(explain(new ZoottError('NO_AUTH', undefined, { path: '/x' }))).toMatchObject({
      exitCode: 4,
      message: 'not authorised for /x',
    });
    expect(
      explain(new ZoottError('WORLD_NOT_INITIALISED', 'world q is not initialised'), { world: 'q' })
        .hint,
    ).toMatch(/zoott init q/);
    expect(explain(new ZoottError('TASK_STATE')).exitCode).toBe(7);
    expect(explain(new Error('boom'))).toMatchObject({
      exitCode: 1,
      hint: expect.stringMatching(/--debug/),
    });
  });

  it('derives a job exit code from its result', () => {
    expect(jobExitCode({ exit: 4 })).toBe(4);
    expect(jobExitCode({ signal: 9 })).toBe(137);
    expect(jobExitCode({ winner: { exit: 0 } })).toBe(0);
    expect(jobExitCode({ winner: null })).toBe(1);
    // Never started: no exit in the result, only why.
    expect(jobExitCode({ pid: 0, error: 'spawn nope ENOENT' })).toBe(127);
    expect(jobExitCode({ winner: { pid: 0, error: 'not allowed' } })).toBe(127);
    expect(jobExitCode({ winner: null, error: 'refused' })).toBe(1);
  });
});

describe('tables', () => {
  it('aligns columns, ignoring colour codes', () => {
    expect(
      renderTable(
        [
          ['a', '\u001b[32mok\u001b[39m', 'x'],
          ['long', 'no', 'y'],
        ],
        ['K', 'S', 'V'],
      ),
    ).toBe('K     S   V\na     \u001b[32mok\u001b[39m  x\nlong  no  y');
  });
});
