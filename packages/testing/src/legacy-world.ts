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

async function ensure(c: Coordinator, path: string, data?: Uint8Array): Promise<void> {
  try {
    await c.create(path, data);
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
export async function legacyInit(c: Coordinator, world: string, buckets = 4): Promise<void> {
  const { pending, working, completed, failed, registry, progress } = AREA_NAMES;
  const tops = [pending, working, completed, failed, registry, progress];
  const layout = new WorldLayout(world, buckets);
  await Promise.all(tops.map((area) => ensure(c, areaParent(area))));
  await Promise.all(tops.map((area) => ensure(c, layout.areaRoot(area))));
  await ensure(c, topNodePath(world), encodeJson({ zoott: 1, buckets }));
  for (const area of [pending, working, completed, failed])
    for (let b = 0; b < buckets; b++) await ensure(c, `${layout.areaRoot(area)}/${bucketName(b)}`);
}

/**
 * A reply directory as zoott 0.1.0's workers made it, shared by every world:
 * `/zoott_r/<exchange>/<routingkey>` (missing parents with the session's default ACL, the
 * directory naming its world), with `results` published in it, oldest first. Returns the
 * result paths.
 */
export async function legacyReplies(
  c: Coordinator,
  world: string,
  exchange: string,
  routingkey: string,
  results: readonly unknown[],
): Promise<string[]> {
  const legacyRoot = areaParent(AREA_NAMES.legacyReplies);
  await ensure(c, legacyRoot);
  await ensure(c, `${legacyRoot}/${exchange}`);
  const dir = `${legacyRoot}/${exchange}/${routingkey}`;
  await ensure(c, dir, encodeJson({ world }));
  const out: string[] = [];
  for (const r of results)
    out.push(await c.create(`${dir}/result-`, encodeJson(r), { sequential: true }));
  return out;
}
