export * from './lock.js';
export * from './lock-identifier.js';
export * from './lock-timeout.js';
