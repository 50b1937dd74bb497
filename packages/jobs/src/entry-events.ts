import type { WorkerOptions } from '@zoott/core';
import { settingError } from './setting-values.js';

// The worker's `--entry-events` setting: runWorker's `entryEvents` option, its modes named in
// words. A switch would not do: `true` is not "on" (the default, `'small'`, is on already)
// but "on every owned bucket".

/** What `--entry-events` takes, in --help order: the default first. */
export const ENTRY_EVENTS_MODES = ['small', 'children', 'all', 'off'] as const;

/** One `--entry-events` mode. */
export type EntryEventsMode = (typeof ENTRY_EVENTS_MODES)[number];

/** runWorker's own default, so the daemon with the setting unset behaves as the library does. */
export const DEFAULT_ENTRY_EVENTS: EntryEventsMode = 'small';

/** Each mode as runWorker's `entryEvents` (see docs/protocol.md, "Entry events"). */
const AS_OPTION: Readonly<Record<EntryEventsMode, NonNullable<WorkerOptions['entryEvents']>>> = {
  small: 'small',
  children: 'children',
  all: true,
  off: false,
};

/**
 * runWorker's `entryEvents` for a mode (unset: the default). The settings table refuses other
 * values as it reads them; this checks again for a program that runs the daemon as a library
 * and passes its config straight in.
 *
 * @throws ZoottError INVALID_CONFIG naming the modes there are.
 */
export function entryEventsOption(
  mode: EntryEventsMode | undefined,
): NonNullable<WorkerOptions['entryEvents']> {
  const chosen: unknown = mode ?? DEFAULT_ENTRY_EVENTS;
  if (!(ENTRY_EVENTS_MODES as readonly unknown[]).includes(chosen))
    throw settingError(
      'entryEvents',
      `must be one of ${ENTRY_EVENTS_MODES.join(', ')}, got ${JSON.stringify(chosen)}`,
      'entryEvents',
    );
  return AS_OPTION[chosen as EntryEventsMode];
}
