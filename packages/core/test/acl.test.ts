import { digestOf, permsFromShort, permsToShort, ZoottError } from '@zoott/core';
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
