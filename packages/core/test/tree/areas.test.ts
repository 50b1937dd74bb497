import { readFileSync } from 'node:fs';
import {
  AREA_NAMES,
  RESERVED_WORLD_NAMES,
  sharedParents,
  validateWorldName,
  WORLD_AREAS,
  WorldLayout,
  worldTops,
} from '@zoott/core/internal';
import { describe, expect, it } from 'vitest';

const protocol = readFileSync(new URL('../../../../docs/protocol.md', import.meta.url), 'utf8');

/**
 * The one list of areas: what the world-name check refuses, what the layout builds, and what
 * docs/protocol.md lists, all the same names.
 */
describe('the areas of a namespace', () => {
  const names = Object.values(AREA_NAMES);

  it('every area name is a reserved world name, the progress area `g` included', () => {
    expect([...RESERVED_WORLD_NAMES].sort()).toEqual([...names].sort());
    for (const name of ['g', ...names])
      expect(() => validateWorldName(name)).toThrow(
        new RegExp(`is reserved \\(/zoott_${name} is one of zoott's own areas`),
      );
    // One-letter names that are no area stay world names.
    for (const name of ['a', 'x', 'z']) expect(validateWorldName(name)).toBe(name);
  });

  it("the layout builds every area's node of a world from the list", () => {
    const layout = new WorldLayout('files', 4);
    expect(WORLD_AREAS.map((a) => layout.areaRoot(a))).toEqual(worldTops('files').slice(0, -1));
    expect(sharedParents()).toEqual(WORLD_AREAS.map((a) => `/zoott_${a}`));
    expect(WORLD_AREAS).toEqual(names.filter((n) => n !== AREA_NAMES.legacyReplies));
    // A world's tree root is never an area's node, whatever its name.
    for (const world of ['files', 'a', 'x~races'])
      expect(sharedParents()).not.toContain(new WorldLayout(world, 1).root);
  });

  it('docs/protocol.md lists exactly these names, and every area in its layout', () => {
    const listed = /\*\*Reserved world names\*\*: ([^.]+)\./.exec(protocol.replace(/\n/g, ' '));
    expect(listed, 'the "Reserved world names" sentence').not.toBeNull();
    const inDocs = [...listed![1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    expect(inDocs).toEqual(names);
    const layout = protocol.slice(protocol.indexOf('## Layout'), protocol.indexOf('## Sharing'));
    for (const name of names) expect(layout).toContain(`/zoott_${name}/`);
  });
});
