export { candidateOrder, candidateSequence } from './candidates.js';
export * from './leader-election.js';
