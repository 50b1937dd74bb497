export * from './acl-lists.js';
export * from './digest.js';
export * from './perms.js';
