// What zoott 0.1.0 left on ZooKeeper, written the way it wrote it, for the tests of the
// upgrade path (a newer init, worker or doctor meeting a world an older release made).
import { type Coordinator, isZoottError } from '@zoott/core';
import {
  AREA_NAMES,
  areaParent,
  bucketName,
  encodeJson,
  topNodePath,
  WorldLayout,
} from '@zoott/core/internal';

async function ensure(coordinator: Coordinator, path: string, data?: Uint8Array): Promise<void> {
  try {
    await coordinator.create(path, data);
  } catch (err) {
    if (!isZoottError(err, 'NODE_EXISTS')) throw err;
  }
}

/**
 * zoott 0.1.0's `init`: the shared area nodes `/zoott_{p,w,c,f,workers,g}` made with the
 * session's default ACL when missing (whoever came first owned them), the world's node in
 * each, its tree root with the meta, and the buckets. No quarantine, schedules, limits,
 * elections, replies or races nodes: 0.1.0 made those lazily, when first needed.
 */
export async function legacyInit(
  coordinator: Coordinator,
  world: string,
  buckets = 4,
): Promise<void> {
  const { pending, working, completed, failed, registry, progress } = AREA_NAMES;
  const tops = [pending, working, completed, failed, registry, progress];
  const layout = new WorldLayout(world, buckets);
  await Promise.all(tops.map((area) => ensure(coordinator, areaParent(area))));
  await Promise.all(tops.map((area) => ensure(coordinator, layout.areaRoot(area))));
  await ensure(coordinator, topNodePath(world), encodeJson({ zoott: 1, buckets }));
  for (const area of [pending, working, completed, failed])
    for (let b = 0; b < buckets; b++)
      await ensure(coordinator, `${layout.areaRoot(area)}/${bucketName(b)}`);
}

/**
 * A reply directory as zoott 0.1.0's workers made it, shared by every world:
 * `/zoott_r/<exchange>/<routingkey>` (missing parents with the session's default ACL, the
 * directory naming its world), with `results` published in it, oldest first. Returns the
 * result paths.
 */
export async function legacyReplies(
  coordinator: Coordinator,
  world: string,
  exchange: string,
  routingkey: string,
  results: readonly unknown[],
): Promise<string[]> {
  const legacyRoot = areaParent(AREA_NAMES.legacyReplies);
  await ensure(coordinator, legacyRoot);
  await ensure(coordinator, `${legacyRoot}/${exchange}`);
  const dir = `${legacyRoot}/${exchange}/${routingkey}`;
  await ensure(coordinator, dir, encodeJson({ world }));
  const out: string[] = [];
  for (const result of results)
    out.push(await coordinator.create(`${dir}/result-`, encodeJson(result), { sequential: true }));
  return out;
}
