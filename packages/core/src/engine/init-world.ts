import type { Coordinator } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { encodeJson } from '../contract/paths.js';
import { NamespaceError, showAclShort } from './acl-principal.js';
import { codeOf } from './errors.js';
import { AREAS, WorldLayout } from './layout.js';
import { META_VERSION, parseMeta } from './meta.js';
import { ensureNode } from './session.js';
import { ensureNamespace, ensureWorldSideNodes, refusedBy } from './world-nodes.js';

/**
 * Creates a world: the shared area nodes it needs (`ensureNamespace`), its tree root with
 * the meta, its node in every area and its scheduler election (`ensureWorldSideNodes`, which
 * also refuses nodes someone else made for it first), and the buckets. Every create tolerates
 * NODE_EXISTS, so concurrent calls are safe. Returns the world's bucket count: `wanted` for a
 * new world; a world that exists keeps its own, and asking for another one explicitly
 * (`explicit`) is INVALID_CONFIG.
 */
export async function initWorld(
  coordinator: Coordinator,
  world: string,
  wanted: number,
  explicit: boolean,
): Promise<number> {
  await ensureNamespace(coordinator);
  const root = new WorldLayout(world, wanted).root;
  const { buckets, made } = await ensureRoot(coordinator, world, root, wanted, explicit);
  const madeHere = made ? [root] : [];
  try {
    await ensureWorldSideNodes(coordinator, world, (await coordinator.getAcl(root)).acl, madeHere);
  } catch (err) {
    // A world that cannot have its nodes is not left half made: what this call made goes
    // again (children first), and a second `init` after the fix starts from scratch.
    if (err instanceof NamespaceError)
      for (const path of madeHere.reverse()) await coordinator.delete(path).catch(() => undefined);
    throw err;
  }
  const layout = new WorldLayout(world, buckets);
  await Promise.all(
    AREAS.flatMap((area) =>
      Array.from({ length: buckets }, (_, bucketNo) =>
        ensureNode(coordinator, layout.bucketPath(area, bucketNo)),
      ),
    ),
  );
  return buckets;
}

/**
 * Creates the tree root with the meta, or reads the bucket count of the one there; `made`
 * says whether this call created it.
 */
async function ensureRoot(
  coordinator: Coordinator,
  world: string,
  root: string,
  wanted: number,
  explicit: boolean,
): Promise<{ buckets: number; made: boolean }> {
  const meta = encodeJson({ zoott: META_VERSION, buckets: wanted });
  try {
    await coordinator.create(root, meta);
    return { buckets: wanted, made: true };
  } catch (err) {
    if (codeOf(err) === 'NO_AUTH') throw await refusedBy(coordinator, root);
    if (codeOf(err) !== 'NODE_EXISTS') throw err;
  }
  let got: Awaited<ReturnType<Coordinator['get']>>;
  try {
    got = await coordinator.get(root);
  } catch (err) {
    if (codeOf(err) !== 'NO_AUTH') throw err;
    const acl = await coordinator.getAcl(root).then(
      (a) => a.acl,
      () => 'unreadable' as const,
    );
    throw new ZoottError(
      'NO_AUTH',
      `world ${world} exists and these credentials may not read it (${root} has ${showAclShort(acl)}): it is someone else's world, or yours under other credentials`,
      { path: root, op: 'init' },
    );
  }
  if (got.data.length === 0) {
    // A bare tree root (made by a tree import, say): adopt it.
    await coordinator.set(root, meta, got.stat.version);
    return { buckets: wanted, made: false };
  }
  const buckets = parseMeta(got.data, root).buckets;
  if (explicit && buckets !== wanted)
    throw new ZoottError(
      'INVALID_CONFIG',
      `world ${world} already exists with ${buckets} buckets, not ${wanted}; buckets cannot change`,
      { field: 'buckets', path: root },
    );
  return { buckets, made: false };
}
