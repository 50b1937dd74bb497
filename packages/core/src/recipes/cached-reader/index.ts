export * from './cached-reader.js';
