// Names the page and its model share, with no DOM behind them (the tree model is tested in Node).
import type { TaskKey } from '@zoott/core';

/** The states a task can be in, in the order the page shows them. */
export const STATES = ['pending', 'working', 'completed', 'failed'] as const;

/** One task state. */
export type State = (typeof STATES)[number];

/** A task key as the page writes it in URLs and data attributes. */
export const encodeKey = (key: TaskKey) => key.join('|');
