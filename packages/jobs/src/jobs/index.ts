export * from './process.js';
export * from './racer.js';
export * from './regular.js';
export * from './resolve.js';
export * from './run-as.js';
