export * from './close-coordinator.js';
export * from './coordinator-source.js';
