import { deleteTree } from '@zoott/core/recipes';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';

describeOnBackends('deleteTree', (backend) => {
  it('removes a node with its whole subtree and leaves its siblings', async () => {
    const zk = await backend().connect();
    for (const p of ['/a', '/a/b', '/a/b/c', '/a/b/d', '/a/e', '/keep']) await zk.create(p);
    await deleteTree(zk, '/a');
    expect(await zk.exists('/a')).toBeNull();
    expect(await zk.exists('/keep')).not.toBeNull();
  });

  it('treats a missing node as already deleted', async () => {
    const zk = await backend().connect();
    await expect(deleteTree(zk, '/nothing/here')).resolves.toBeUndefined();
  });
});
