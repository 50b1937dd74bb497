import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, readdir, rmdir, unlink } from 'node:fs/promises';

// Removing a directory tree that other users may write in while it is removed (a race's input
// directory). A path is looked up again at every use, so whoever can write in the tree can swap
// a directory for a link between a check and the removal, and a path-based `rm -r` then
// deletes through the link: as root, whatever it points at. Here every step goes through a
// directory this process holds open (`/proc/self/fd/<fd>/<name>`: the kernel resolves the
// descriptor to the directory itself, not to a path), a directory is opened with O_NOFOLLOW,
// and unlink/rmdir never follow a last component. So a removal only ever touches entries of
// the directories it opened, walking down from the root it was given, whatever is swapped.

/** Why a tree was (partly) kept. */
export class KeptError extends Error {}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** `name` inside the directory open as `dir`, as a path the kernel resolves through the descriptor. */
const inside = (dir: FileHandle, name: string) => `/proc/self/fd/${dir.fd}/${name}`;

/**
 * Opens directory `name` inside `dir` without following a link; null when it is a link or no
 * directory (swapped meanwhile).
 */
export async function openDirIn(dir: FileHandle, name: string): Promise<FileHandle | null> {
  try {
    return await open(inside(dir, name), DIR_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') return null;
    throw err;
  }
}

/** Opens `path` (trusted: the operator's data directory) as a directory. */
export function openRoot(path: string): Promise<FileHandle> {
  return open(path, constants.O_RDONLY | constants.O_DIRECTORY);
}

/**
 * Removes everything inside the open directory `dir`, and then the entry `name` of `parent`
 * if it is still that directory. Entries on another file system (a mount point) are kept,
 * and so is the whole tree then.
 *
 * @throws KeptError when something could not be removed, saying what.
 */
export async function removeDirIn(
  parent: FileHandle,
  name: string,
  dir: FileHandle,
): Promise<void> {
  const self = await dir.stat();
  await removeContents(dir, self.dev);
  const now = await lstat(inside(parent, name)).catch(() => null);
  // Swapped for another directory meanwhile: that one is not ours to remove.
  if (!now?.isDirectory() || now.ino !== self.ino || now.dev !== self.dev) return;
  try {
    await rmdir(inside(parent, name));
  } catch (err) {
    throw new KeptError(`${name} could not be removed (${(err as NodeJS.ErrnoException).code})`);
  }
}

async function removeContents(dir: FileHandle, dev: number): Promise<void> {
  const names = await readdir(`/proc/self/fd/${dir.fd}`);
  for (const name of names) await removeEntry(dir, name, dev);
}

async function removeEntry(dir: FileHandle, name: string, dev: number): Promise<void> {
  // A few tries: an entry swapped between the look and the removal is looked at again.
  for (let attempt = 0; attempt < 5; attempt++) {
    let st: Stats;
    try {
      st = await lstat(inside(dir, name));
    } catch {
      return; // gone
    }
    if (st.dev !== dev) throw new KeptError(`${name} is on another file system (a mount point)`);
    if (!st.isDirectory()) {
      try {
        await unlink(inside(dir, name));
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        if (code === 'EISDIR' || code === 'EPERM') continue; // became a directory
        throw err;
      }
    }
    const sub = await openDirIn(dir, name);
    if (!sub) continue; // became a link or a file: look again
    try {
      await removeDirIn(dir, name, sub);
      return;
    } finally {
      await sub.close();
    }
  }
  throw new KeptError(`${name} kept changing while it was removed`);
}
