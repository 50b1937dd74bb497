export * from './acl.js';
export * from './coordinator.js';
export * from './errors.js';
export * from './paths.js';
export * from './request-checks.js';
export * from './request-size.js';
