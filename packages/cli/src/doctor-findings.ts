import { type Acl, type Coordinator, createEngine } from '@zoott/core';
import {
  type DiagnosisProgress,
  diagnoseWorld,
  diagnoseWorldMeta,
  type Finding,
} from '@zoott/core/admin';
import { worldExtent } from './world-acl.js';

const byPath = (a: Finding, b: Finding) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * Everything `zoott doctor` reports for a world: the world itself (core's `diagnoseWorld`:
 * its nodes in every area, reply paths and race state included, and the shared area nodes),
 * its race world (its race coordinators run there; what `lock-down` locks with the world),
 * and what zoott 0.1.0 kept of its replies and races. Sorted by path. `onProgress` hears how far
 * the diagnosis of each of them (by world name) is.
 */
export async function worldFindings(
  coordinator: Coordinator,
  world: string,
  acl: readonly Acl[] | null,
  onProgress?: (world: string, progress: DiagnosisProgress) => void,
  /** The connect string's chroot, for the full paths of the commands only admins can run. */
  chroot = '',
): Promise<Finding[]> {
  // Without a readable meta no engine opens the world: that is the one finding then.
  const meta = await diagnoseWorldMeta(coordinator, world);
  if (meta) return [meta];
  const ctx = await createEngine(coordinator, { world }).context();
  const extent = await worldExtent(coordinator, world);
  const findings = await diagnoseWorld(ctx, {
    acl,
    chroot,
    ...(onProgress ? { onProgress: (p: DiagnosisProgress) => onProgress(world, p) } : {}),
  });
  const raceMeta = extent.raceWorld ? await diagnoseWorldMeta(coordinator, extent.raceWorld) : null;
  if (raceMeta) findings.push(raceMeta);
  else if (extent.raceWorld) {
    const races = await createEngine(coordinator, { world: extent.raceWorld }).context();
    const raceWorld = extent.raceWorld;
    findings.push(
      ...(await diagnoseWorld(races, {
        acl,
        chroot,
        leftoverWorlds: false,
        ...(onProgress ? { onProgress: (p: DiagnosisProgress) => onProgress(raceWorld, p) } : {}),
      })),
    );
  }
  // What zoott 0.1.0 kept of the world's replies and races where every world shared them.
  const { legacyFindings } = await import('@zoott/jobs/internal');
  findings.push(...(await legacyFindings(coordinator, world)));
  return findings.sort(byPath);
}
