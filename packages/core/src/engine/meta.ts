import { ZoottError } from '../contract/errors.js';
import { decodeJson } from '../contract/paths.js';
import { MAX_BUCKETS } from './layout.js';

/** Version of the world meta format, `{"zoott":1,"buckets":B}` in the tree root. */
export const META_VERSION = 1;

/** What a world's tree root holds about it (other fields, such as `paused`, ride along). */
export interface WorldMeta {
  zoott: number;
  buckets: number;
}

/** The bucket count and version of a world meta; INVALID_CONFIG for anything else. */
export function parseMeta(data: Uint8Array, path: string): WorldMeta {
  const meta = decodeJson<Partial<WorldMeta> | null>(data, path);
  if (
    !meta ||
    typeof meta.buckets !== 'number' ||
    !Number.isInteger(meta.buckets) ||
    meta.buckets < 1 ||
    meta.buckets > MAX_BUCKETS
  )
    throw new ZoottError(
      'INVALID_CONFIG',
      `${path} does not hold zoott world meta ({"zoott":1,"buckets":N}); run init`,
      { path },
    );
  return { zoott: meta.zoott ?? META_VERSION, buckets: meta.buckets };
}
