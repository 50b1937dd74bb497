// The floor under the latency key: the fewest round trips a ZooKeeper job queue with
// exclusive claims can make between a producer's write and a handler's start, run by a bare
// client (no engine). The producer writes the entry in one multi (as `queue` does); the worker
// hears of it from a tree watch (ZooKeeper 3.6+: the event names the entry, so no listing),
// reads it once, and claims it in one multi (bump the entry's version, create an ephemeral
// working node) before it "starts" it; then completes it in one multi (record, delete the
// entry and the working node), as zoott does. Whatever zoott spends above this floor, at the
// same rate on the same server and machine, is its own.

/** The bare path's root; a bucket per worker under it, and the tasks' nodes beside them. */
const BARE_ROOT = '/bench_bare';

/** Creates the bare path's nodes: the root, `workers` buckets, the working and done areas. */
export async function prepareBarePath(client, workers) {
  const paths = [BARE_ROOT, `${BARE_ROOT}/w`, `${BARE_ROOT}/c`, `${BARE_ROOT}/t`];
  for (let i = 0; i < workers; i++) paths.push(`${BARE_ROOT}/b${i}`);
  for (const p of paths) await client.create(p);
}

/** The producer's write for task `i`: its node and its entry in bucket `i % workers`. */
export function bareQueueOps(i, workers, data) {
  const name = `e${String(i).padStart(10, '0')}`;
  return [
    { op: 'create', path: `${BARE_ROOT}/t/${name}` },
    { op: 'create', path: `${BARE_ROOT}/b${i % workers}/${name}`, data },
  ];
}

/**
 * Serves bucket `index` until the returned stop function is called: `started(data)` is called
 * with each entry's data the moment its claim is in; `completed()` after its completion.
 */
export async function serveBarePath(client, index, started, completed) {
  const bucket = `${BARE_ROOT}/b${index}`;
  const run = async (path) => {
    const name = path.slice(bucket.length + 1);
    const { data, stat } = await client.get(path);
    const working = `${BARE_ROOT}/w/${index}-${name}`;
    await client.multi([
      { op: 'set', path, data, version: stat.version },
      { op: 'create', path: working, ephemeral: true },
    ]);
    started(data);
    await client.multi([
      { op: 'create', path: `${BARE_ROOT}/c/${name}` },
      { op: 'delete', path, version: stat.version + 1 },
      { op: 'delete', path: working },
    ]);
    completed();
  };
  return client.watchTree(bucket, (e) => {
    if (e.type === 'created')
      run(e.path).catch((err) => process.send?.({ type: 'error', error: String(err) }));
  });
}
