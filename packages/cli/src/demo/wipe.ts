import { type Coordinator, isZoottError } from '@zoott/core';
import { encodeJson, parseMeta, worldAreaNodes, worldRoot } from '@zoott/core/internal';
import { deleteTree } from '@zoott/core/recipes';

/** Deletes everything below `path`, keeping `path` itself. */
async function clearBelow(coordinator: Coordinator, path: string): Promise<void> {
  const names = await coordinator.children(path).catch((err: unknown) => {
    if (isZoottError(err, 'NO_NODE')) return [] as string[];
    throw err;
  });
  await Promise.all(names.map((n) => deleteTree(coordinator, `${path}/${n}`)));
}

/**
 * Removes every node of a world below its own nodes: its tasks, entries, records, claims,
 * registrations, progress and the rest of each area. Its node in each area stays (nobody may
 * delete in an area node, which every world shares), and so does its tree root when the
 * namespace root keeps it (a chroot `zoott init` made): its meta is written afresh then.
 */
export async function wipeWorld(coordinator: Coordinator, world: string): Promise<void> {
  await Promise.all(worldAreaNodes(world).map((top) => clearBelow(coordinator, top)));
  const root = worldRoot(world);
  try {
    await deleteTree(coordinator, root);
  } catch (err) {
    if (!isZoottError(err, 'NO_AUTH')) throw err;
    const got = await coordinator.get(root);
    const { buckets } = parseMeta(got.data, root);
    await coordinator.set(root, encodeJson({ zoott: 1, buckets }), got.stat.version);
  }
}
