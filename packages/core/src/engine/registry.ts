import type { Coordinator } from '../contract/coordinator.js';
import { decodeJson } from '../contract/paths.js';
import { fnv1a32 } from './layout.js';
import { codeOf } from './support.js';

/** What a worker publishes in its registry node (qdo's "which queues I hold"). */
export interface WorkerInfo {
  id: string;
  host?: string;
  pid?: number;
  server?: string;
  types: string[];
  buckets: number[];
  started: number;
  version: number;
}

/**
 * Buckets owned by `me` among the live registry node names: each bucket goes to the name
 * with the highest `fnv1a32(name + '/' + bucket)` (rendezvous hashing). Deterministic from
 * the sorted list, and a join or leave moves only the buckets of the worker that changed.
 */
export function ownedBuckets(me: string, live: readonly string[], buckets: number): number[] {
  const names = live.includes(me) ? live : [...live, me];
  const out: number[] = [];
  for (let b = 0; b < buckets; b++) {
    let best = '';
    let bestScore = -1;
    for (const n of names) {
      const s = fnv1a32(`${n}/${b}`);
      if (s > bestScore || (s === bestScore && n < best)) {
        best = n;
        bestScore = s;
      }
    }
    if (best === me) out.push(b);
  }
  return out;
}

/** The registry children with a watch, plus each node's info (cached by node name). */
export class RegistryView {
  private readonly infos = new Map<string, WorkerInfo | null>();
  names: string[] = [];

  constructor(
    private readonly c: Coordinator,
    private readonly path: string,
  ) {}

  /** Re-lists the registry, arming a watch that calls `onChange` once. */
  async refresh(onChange: () => void): Promise<string[]> {
    const names = (await this.c.children(this.path, { watch: onChange })).sort();
    const live = new Set(names);
    for (const n of this.infos.keys()) if (!live.has(n)) this.infos.delete(n);
    await Promise.all(
      names
        .filter((n) => !this.infos.has(n))
        .map(async (n) => {
          try {
            const got = await this.c.get(`${this.path}/${n}`);
            this.infos.set(n, decodeJson<WorkerInfo>(got.data, `${this.path}/${n}`));
          } catch (err) {
            if (codeOf(err) !== 'NO_NODE') throw err;
          }
        }),
    );
    this.names = names;
    return names;
  }

  /** `server` identities of the live workers. */
  servers(): Set<string> {
    const out = new Set<string>();
    for (const info of this.infos.values()) if (info?.server) out.add(info.server);
    return out;
  }
}
