import { type Engine, type PauseState, ZoottError } from '@zoott/core';

/**
 * `POST /api/pause` and `/api/resume` with `{world, type?}`: the whole world, or one task
 * type. A `type` that is not a string is refused by name; the engine checks the rest.
 */
export function pauseOrResume(
  engine: Engine,
  pause: boolean,
  body: Record<string, unknown>,
): Promise<PauseState> {
  if (body.type !== undefined && typeof body.type !== 'string')
    throw new ZoottError('BAD_ARGUMENTS', 'type: must be a task type (a string)', {
      field: 'type',
    });
  const options = typeof body.type === 'string' ? { type: body.type } : {};
  return pause ? engine.pause(options) : engine.resume(options);
}
