import { type Coordinator, isZoottError, OPEN_ACL, utf8 } from '@zoott/core';
import { joinPath } from '@zoott/core/internal';
import {
  exportHierarchy,
  formatHierarchy,
  type Hierarchy,
  hierarchyFormatOf,
  initHierarchy,
  parseAcl,
  parseHierarchyText,
} from '@zoott/core/recipes';
import { describeOnBackends } from '@zoott/testing';
import { describe, expect, it } from 'vitest';

const users = { aa: 'pw_aa', bb: 'pw_bb', cc: 'pw_cc' };
const auth = ['digest', 'aa', 'pw_aa'] as const;

// The tree of zkutil's own init_hierarchy test.
const tree: Hierarchy = {
  node1: {
    __val__: 'node1_val',
    __acl__: { aa: 'cdrwa', bb: 'rw' },
    node11: { __val__: 'node11_val', __acl__: { aa: 'cdrwa', cc: 'r' } },
    node12: { __val__: 'node12_val', node121: { __val__: 'node121_val' } },
    node13: { __acl__: { aa: 'cdrwa' } },
  },
  node2: {
    __val__: 'node2_val',
    node21: { __val__: 'node21_val' },
    node22: { __acl__: { aa: 'rwa' } },
  },
  node3: {
    __acl__: { aa: 'carw', cc: 'r' },
    node31: { node311: { node3111: {}, node3112: null } },
  },
};

/**
 * Deletes a subtree. The client is authenticated as `aa`, who has ADMIN everywhere but not
 * always DELETE, so inner nodes are opened up first (deleting a child needs DELETE on its parent).
 */
async function removeTree(zk: Coordinator, path: string): Promise<void> {
  const children = await zk.children(path);
  if (children.length > 0) await zk.setAcl(path, OPEN_ACL);
  for (const child of children) await removeTree(zk, joinPath(path, child));
  await zk.delete(path);
}

describeOnBackends('initHierarchy / exportHierarchy', (backend) => {
  it('creates values and digest ACLs, inheriting the parent ACL where none is given', async () => {
    const zk = await backend().connect();
    await zk.addAuth('digest', 'aa:pw_aa');
    await zk.create('/src');
    await initHierarchy(zk, tree, users, auth, { root: '/src' });
    const rootAcl = parseAcl((await zk.getAcl('/src')).acl);
    const expected: Array<[string, string, string[][], string[]]> = [
      [
        '/node1',
        '"node1_val"',
        [
          ['digest', 'aa', 'cdrwa'],
          ['digest', 'bb', 'rw'],
        ],
        ['node11', 'node12', 'node13'],
      ],
      [
        '/node1/node11',
        '"node11_val"',
        [
          ['digest', 'aa', 'cdrwa'],
          ['digest', 'cc', 'r'],
        ],
        [],
      ],
      [
        '/node1/node12',
        '"node12_val"',
        [
          ['digest', 'aa', 'cdrwa'],
          ['digest', 'bb', 'rw'],
        ],
        ['node121'],
      ],
      [
        '/node1/node12/node121',
        '"node121_val"',
        [
          ['digest', 'aa', 'cdrwa'],
          ['digest', 'bb', 'rw'],
        ],
        [],
      ],
      ['/node1/node13', '{}', [['digest', 'aa', 'cdrwa']], []],
      ['/node2', '"node2_val"', rootAcl, ['node21', 'node22']],
      ['/node2/node21', '"node21_val"', rootAcl, []],
      ['/node2/node22', '{}', [['digest', 'aa', 'rwa']], []],
      [
        '/node3',
        '{}',
        [
          ['digest', 'aa', 'crwa'],
          ['digest', 'cc', 'r'],
        ],
        ['node31'],
      ],
      [
        '/node3/node31/node311/node3112',
        '{}',
        [
          ['digest', 'aa', 'crwa'],
          ['digest', 'cc', 'r'],
        ],
        [],
      ],
    ];
    for (const [rel, value, acl, children] of expected) {
      const path = `/src${rel}`;
      expect(utf8.decode((await zk.get(path)).data), path).toBe(value);
      expect(parseAcl((await zk.getAcl(path)).acl), path).toEqual(acl);
      expect((await zk.children(path)).sort(), path).toEqual(children);
    }
    // Only aa may write under node3; bb may read node1 but not node11.
    const bb = await backend().connect();
    await bb.addAuth('digest', 'bb:pw_bb');
    expect(utf8.decode((await bb.get('/src/node1')).data)).toBe('"node1_val"');
    await expect(bb.get('/src/node1/node11')).rejects.toMatchObject({ code: 'NO_AUTH' });
    await removeTree(zk, '/src');
  });

  it('export then import reproduces the tree, values and ACLs', async () => {
    const zk = await backend().connect();
    await zk.addAuth('digest', 'aa:pw_aa');
    await zk.create('/src');
    await initHierarchy(zk, tree, users, null, { root: '/src' });
    await zk.create('/src/raw', utf8.encode('not json'), {
      acl: [{ scheme: 'world', id: 'anyone', perms: 1 }],
    });
    await zk.create('/src/empty');
    const exported = await exportHierarchy(zk, '/src');
    expect(exported.node1).toMatchObject({
      __val__: 'node1_val',
      __acl__: { aa: 'cdrwa', bb: 'rw' },
    });
    expect(exported.raw).toEqual({ __raw__: 'not json', __acl__: { 'world:anyone': 'r' } });

    for (const format of ['json', 'yaml'] as const) {
      const text = formatHierarchy(exported, format);
      const copy = `/copy-${format}`;
      await initHierarchy(zk, parseHierarchyText(text, format), users, null, { root: copy });
      expect(await exportHierarchy(zk, copy)).toEqual(exported);
      expect(utf8.decode((await zk.get(`${copy}/raw`)).data)).toBe('not json');
      expect((await zk.get(`${copy}/empty`)).data).toHaveLength(0);
      await removeTree(zk, copy);
    }
    await removeTree(zk, '/src');
  });

  it('leaves ephemeral nodes out of an export (they belong to a live session)', async () => {
    const zk = await backend().connect();
    await zk.create('/live', utf8.encode('{}'));
    await zk.create('/live/kept', utf8.encode('1'));
    await zk.create('/live/claim', utf8.encode('{"worker":"w"}'), { ephemeral: true });
    const exported = await exportHierarchy(zk, '/live');
    expect(Object.keys(exported).filter((k) => !k.startsWith('__'))).toEqual(['kept']);
  });

  it('resets the ACL of existing nodes, and their value only with updateExisting', async () => {
    const zk = await backend().connect();
    await zk.addAuth('digest', 'aa:pw_aa');
    await zk.create('/x', utf8.encode('"old"'));
    await initHierarchy(zk, { x: { __val__: 'new', __acl__: { aa: 'cdrwa' } } }, users);
    expect(utf8.decode((await zk.get('/x')).data)).toBe('"old"');
    expect(parseAcl((await zk.getAcl('/x')).acl)).toEqual([['digest', 'aa', 'cdrwa']]);
    await initHierarchy(zk, { x: { __val__: 'new' } }, users, null, { updateExisting: true });
    expect(utf8.decode((await zk.get('/x')).data)).toBe('"new"');
    await zk.delete('/x');
  });

  it('rejects users without a password and malformed trees before writing', async () => {
    const zk = await backend().connect();
    const e1 = await initHierarchy(zk, { y: { __acl__: { zz: 'r' } } }, users).catch(
      (e: unknown) => e,
    );
    expect(isZoottError(e1, 'INVALID_CONFIG')).toBe(true);
    expect(String(e1)).toContain('zz');
    const e2 = await initHierarchy(zk, { y: { __acl__: { aa: 'rx' } } }, users).catch(
      (e: unknown) => e,
    );
    expect(isZoottError(e2, 'INVALID_CONFIG')).toBe(true);
    const e3 = await initHierarchy(zk, { 'a/b': {} }, users).catch((e: unknown) => e);
    expect(isZoottError(e3, 'INVALID_CONFIG')).toBe(true);
    expect(await zk.exists('/y')).toBeNull();
    await expect(exportHierarchy(zk, 'relative')).rejects.toMatchObject({ code: 'INVALID_PATH' });
  });
});

describe('hierarchy text', () => {
  it('reads the spec YAML layout and JSON alike', () => {
    const yaml = [
      'node1:',
      '  __val__: {"a": 1}',
      '  __acl__:',
      '    user_1: cdrwa',
      '    user_2: rw',
      'node2:',
      '  node21:',
    ].join('\n');
    const parsed = parseHierarchyText(yaml, 'yaml');
    expect(parsed).toEqual({
      node1: { __val__: { a: 1 }, __acl__: { user_1: 'cdrwa', user_2: 'rw' } },
      node2: { node21: null },
    });
    expect(parseHierarchyText(formatHierarchy(parsed, 'json'), 'json')).toEqual(parsed);
    expect(hierarchyFormatOf('tree.YML')).toBe('yaml');
    expect(hierarchyFormatOf('tree.json')).toBe('json');
    expect(hierarchyFormatOf('tree.txt')).toBeNull();
    expect(() => parseHierarchyText('{', 'json', 'tree.json')).toThrow(
      /tree\.json is not valid json/,
    );
    expect(() => parseHierarchyText('- a', 'yaml')).toThrow(/INVALID_CONFIG/);
  });
});
