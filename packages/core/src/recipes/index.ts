// ZooKeeper helper recipes (zkutil parity), one folder per recipe, all written against the
// Coordinator contract only.
export * from './acl/index.js';
export * from './backward-locking/index.js';
export * from './cached-reader/index.js';
export * from './cas-loop/index.js';
export * from './conf/index.js';
export * from './connection/index.js';
export * from './delete-tree/index.js';
export * from './election/index.js';
export * from './hierarchy/index.js';
export * from './lock/index.js';
export * from './lock-id/index.js';
export * from './waits/index.js';
