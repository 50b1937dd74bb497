import { ZoottError } from '@zoott/core';
import { digestOf, permsFromShort, permsToShort } from '@zoott/core/internal';
import { describe, expect, it } from 'vitest';

describe('digest', () => {
  it('matches ZooKeeper for xp:123', () => {
    expect(digestOf('xp', '123')).toBe('xp:LNcZO17uqqJ4GuYoSclIsGjYniQ=');
  });
  it('round-trips cdrwa letters', () => {
    expect(permsToShort(permsFromShort('ARWDC'))).toBe('cdrwa');
    expect(() => permsFromShort('rx')).toThrow(ZoottError);
  });
});
