export * from './host-info.js';
export * from './lock-id.js';
