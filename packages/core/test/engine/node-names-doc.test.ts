import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createEngine, runWorker } from '@zoott/core';
import { describeOnBackends } from '@zoott/testing';
import { expect, it } from 'vitest';
import { eventually, memoryLogger, worldName } from './helpers.js';

// The sequential node names the docs give are the names a worker really makes. On ZooKeeper
// the adapter's protected creates put a marker before the sequence (`_p` + 12 hex digits +
// `_`); the memory adapter puts none. The layout's spelling, read off the Markdown, must match.

const protocol = fileURLToPath(new URL('../../../../docs/protocol.md', import.meta.url));
const readme = fileURLToPath(new URL('../../../../README.md', import.meta.url));

/** The documented name below `prefix` (the layout's first word there), as a pattern. */
function documented(markdown: string, prefix: string, adapter: 'memory' | 'zookeeper'): RegExp {
  const text = readFileSync(markdown, 'utf8');
  const at = text.indexOf(prefix);
  if (at < 0) throw new Error(`${markdown}: no ${prefix}`);
  const name = text.slice(at + prefix.length).split(/\s/)[0]!;
  // The marker is ZooKeeper's: written `_p<hex>_` in the docs, absent on the memory adapter.
  const spelled = adapter === 'memory' ? name.replace('_p<hex>_', '') : name;
  const source = spelled
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace(/<hex>/g, '[0-9a-f]{12}')
    .replace(/<seq>/g, '\\d{10}')
    .replace(/<tag>/g, '[0-9a-z]+');
  return new RegExp(`^${source}$`);
}

describeOnBackends('docs: the names of the registry and election nodes', (backend) => {
  it('a worker registers, and stands for scheduler, under the names the docs give', async () => {
    const c = await backend().connect();
    const world = worldName();
    const engine = createEngine(c, { world, buckets: 2, logger: memoryLogger() });
    await engine.init();
    const worker = runWorker(c, { t: () => 1 }, { world, logger: memoryLogger(), pollMs: 100 });
    try {
      await eventually(() => worker.registryPath !== null);
      const registered = worker.registryPath!.slice(`/zoott_workers/${world}/`.length);
      const candidates = `/zoott_leaders/${world}/scheduler`;
      await eventually(async () => (await c.children(candidates).catch(() => [])).length > 0);
      const [candidate] = await c.children(candidates);
      const kind = backend().name;
      for (const doc of [protocol, readme])
        expect(registered).toMatch(documented(doc, '/zoott_workers/<world>/', kind));
      expect(candidate).toMatch(documented(protocol, '/zoott_leaders/<world>/scheduler/', kind));
    } finally {
      await worker.stop();
    }
  });
});
