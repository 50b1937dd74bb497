// `@zoott/core/recipes`: ZooKeeper helpers with zkutil's meaning (Lock, casLoop, getNext,
// waitAbsent, CachedReader, hierarchy import/export, lock ids, ACL parsing, client config),
// written against the Coordinator contract only. See src/recipes/README.md.
export * from './recipes/index.js';
