import { MemoryServer } from '@zoott/memory-adapter';
import { describe, expect, it } from 'vitest';
import {
  createEngine,
  internalWorldName,
  isInternalWorld,
  listWorlds,
  validateUserWorldName,
  validateWorldName,
} from '../../src/internal.js';

describe('user and internal worlds', () => {
  it('lists the user worlds only, sorted; none at all is an empty list', async () => {
    const c = await new MemoryServer().connect();
    expect(await listWorlds(c)).toEqual([]);
    for (const world of ['beta', 'alpha', internalWorldName('alpha', 'races'), 'alpha-races'])
      await createEngine(c, { world }).init();
    expect(await listWorlds(c)).toEqual(['alpha', 'alpha-races', 'beta']);
  });

  it('keeps the internal mark out of the names users give', () => {
    expect(internalWorldName('jobs', 'races')).toBe('jobs~races');
    expect(isInternalWorld('jobs~races')).toBe(true);
    expect(isInternalWorld('jobs-races')).toBe(false);
    expect(validateWorldName('jobs~races')).toBe('jobs~races');
    expect(validateUserWorldName('jobs-races')).toBe('jobs-races');
    expect(() => validateUserWorldName('jobs~races')).toThrow(/marks zoott's internal worlds/);
    expect(() => validateUserWorldName('p')).toThrow(/reserved/);
  });

  it("the library takes a world's name by the CLI's rule: '~' only in zoott's own worlds", async () => {
    const c = await new MemoryServer().connect();
    // What `zoott --world` refuses, createEngine refuses too, naming why.
    for (const world of ['a~b', 'jobs~', 'jobs~races~races', 'x~y~races'])
      expect(() => createEngine(c, { world }), world).toThrow(
        /INVALID_CONFIG: world ".*": must not contain '~', which marks zoott's internal worlds/,
      );
    // An area's name is refused as such first, by both.
    expect(() => createEngine(c, { world: '~races' })).toThrow(
      /INVALID_CONFIG: world "~races": is reserved/,
    );
    expect(() => validateUserWorldName('~races')).toThrow(/world "~races": is reserved/);
    for (const world of ['a~b', 'jobs~races'])
      expect(() => validateUserWorldName(world)).toThrow(/marks zoott's internal worlds/);
    // The one name with '~' an engine takes: the internal world zoott derives from a user's.
    expect(createEngine(c, { world: internalWorldName('jobs', 'races') }).world).toBe('jobs~races');
  });
});
