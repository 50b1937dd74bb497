import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LibModule } from '../src/zk-wire/client-lib.js';

/**
 * Copies of node-zookeeper-client as a user could end up with them: the registry's pristine
 * 1.1.3 (the workspace's patched copy with patches/ reversed, so no network is needed), or a
 * copy missing the fixes of one file only. Each copy is a fresh module instance.
 */

const PATCH = fileURLToPath(
  new URL('../../../patches/node-zookeeper-client@1.1.3.patch', import.meta.url),
);
const here = createRequire(import.meta.url);
/** The workspace's (patched) copy, and the dependencies it resolves. */
const patchedDir = path.dirname(here.resolve('node-zookeeper-client/package.json'));
const fromLibrary = createRequire(path.join(patchedDir, 'index.js'));

const made: string[] = [];

/** Removes every copy made so far. */
export function removeCopies(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A directory `<tmp>/node_modules/node-zookeeper-client` with async and underscore beside it. */
function copyPatched(): { root: string; dir: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'zoott-nzc-'));
  made.push(root);
  const dir = path.join(root, 'node_modules', 'node-zookeeper-client');
  cpSync(patchedDir, dir, { recursive: true, dereference: true });
  for (const dep of ['async', 'underscore'])
    symlinkSync(
      path.dirname(fromLibrary.resolve(`${dep}/package.json`)),
      path.join(root, 'node_modules', dep),
    );
  return { root, dir };
}

function load(root: string): LibModule {
  return createRequire(path.join(root, 'index.js'))('node-zookeeper-client') as LibModule;
}

/** The files the patch changes, relative to the package. */
export const PATCHED_FILES = [
  'index.js',
  'lib/ConnectionManager.js',
  'lib/Exception.js',
  'lib/Transaction.js',
] as const;

/**
 * node-zookeeper-client 1.1.3 without zoott's fixes; with `onlyFile`, without the fixes to
 * that one file (the others kept).
 */
export function unpatchedLibrary(onlyFile?: (typeof PATCHED_FILES)[number]): LibModule {
  const pristine = copyPatched();
  execFileSync('patch', ['-R', '-p1', '--quiet', '-i', PATCH], { cwd: pristine.dir });
  if (!onlyFile) return load(pristine.root);
  const mixed = copyPatched();
  cpSync(path.join(pristine.dir, onlyFile), path.join(mixed.dir, onlyFile));
  return load(mixed.root);
}

/** A fresh instance of the workspace's patched copy. */
export function patchedLibrary(): LibModule {
  return load(copyPatched().root);
}
