import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Handlers, type TaskHandler, ZoottError } from '@zoott/core';
import { checkTrustedModule } from './file-trust.js';

/**
 * Loads a handlers module: its function exports (named, or a default object of them). Its
 * code runs in the worker, as its user, so it is loaded only when it may be trusted: owned by
 * that user or root, writable by nobody else, in a directory nobody else may write (unless
 * sticky). What the module itself imports is not checked.
 */
export async function loadHandlers(path: string): Promise<Handlers> {
  let mod: Record<string, unknown>;
  try {
    checkTrustedModule(resolve(path), { kind: 'handlers module', field: 'handlers' });
  } catch (err) {
    if (err instanceof ZoottError) throw err;
    throw new ZoottError(
      'INVALID_CONFIG',
      `handlers: cannot load ${path} (${(err as Error).message})`,
      { field: 'handlers', cause: err },
    );
  }
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
    for (const [key, value] of Object.entries(def))
      if (typeof value === 'function') out[key] = value as TaskHandler;
  for (const [key, value] of Object.entries(mod))
    if (key !== 'default' && typeof value === 'function') out[key] = value as TaskHandler;
  if (Object.keys(out).length === 0)
    throw new ZoottError('INVALID_CONFIG', `handlers: ${path} exports no function`, {
      field: 'handlers',
    });
  return out;
}
