import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Handlers, type TaskHandler, ZoottError } from '@zoott/core';

/** Loads a handlers module: its function exports (named, or a default object of them). */
export async function loadHandlers(path: string): Promise<Handlers> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (err) {
    throw new ZoottError(
      'INVALID_CONFIG',
      `handlers: cannot load ${path} (${(err as Error).message})`,
      { field: 'handlers', cause: err },
    );
  }
  const out: Record<string, TaskHandler> = {};
  const def = mod.default;
  if (typeof def === 'object' && def !== null)
    for (const [k, v] of Object.entries(def))
      if (typeof v === 'function') out[k] = v as TaskHandler;
  for (const [k, v] of Object.entries(mod))
    if (k !== 'default' && typeof v === 'function') out[k] = v as TaskHandler;
  if (Object.keys(out).length === 0)
    throw new ZoottError('INVALID_CONFIG', `handlers: ${path} exports no function`, {
      field: 'handlers',
    });
  return out;
}
