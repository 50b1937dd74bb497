// Another user racing a root process that removes a directory tree it may write in: the user
// swaps directories for links to root-only victims, over and over, while root removes. Used by
// the race input cleanup tests (the library's removal, and the worker binary's).
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { SystemUser } from './system-user.js';

/**
 * The other user's loop, a Node program: `node -e SWAP <dir> <victim> <victim> <end ms>`. It
 * watches every `in-*` entry of `<dir>` (inotify), and the moment something changes in one
 * (a removal started there), it moves the entry's subdirectories aside and puts links to the
 * first victim in their place, for 20 ms, then puts them back; every third time it does that
 * to the entry itself, and each time it plants a link to the second victim among the files.
 * A removal that looks at a directory and then reads it by path is caught between the two.
 */
const SWAP = `
const fs = require('node:fs');
const [u, v1, v2, end] = process.argv.slice(1);
const watched = new Set();
const busy = new Set();
const rounds = new Map();
const aside = (p, to, moved) => {
  try { fs.renameSync(p, p + '.x'); } catch { return; }
  try { fs.symlinkSync(to, p); } catch {}
  moved.push(p);
};
const swap = (e) => {
  if (busy.has(e)) return;
  busy.add(e);
  const n = (rounds.get(e) ?? 0) + 1;
  rounds.set(e, n);
  const dir = u + '/' + e;
  const moved = [];
  try { fs.symlinkSync(v2, dir + '/l' + n); } catch {}
  if (n % 3 === 0) aside(dir, v1, moved);
  else {
    let subs = [];
    try { subs = fs.readdirSync(dir).filter((s) => s.startsWith('d') && !s.endsWith('.x')); } catch {}
    for (const d of subs) aside(dir + '/' + d, v1, moved);
  }
  setTimeout(() => {
    for (const p of moved) {
      try { fs.unlinkSync(p); } catch {}
      try { fs.renameSync(p + '.x', p); } catch {}
    }
    busy.delete(e);
  }, 20);
};
const look = () => {
  if (Date.now() > Number(end)) process.exit(0);
  let inputs = [];
  try { inputs = fs.readdirSync(u).filter((e) => e.startsWith('in-') && !e.endsWith('.x')); } catch {}
  for (const e of inputs) {
    if (watched.has(e)) continue;
    watched.add(e);
    try {
      const w = fs.watch(u + '/' + e, () => swap(e));
      w.on('error', () => {});
      setTimeout(() => w.close(), 5000);
    } catch {}
  }
  setTimeout(look, 1);
};
look();
`;

/** The swapping loop as `user`, in `dir` (which the user may write), for `ms`. */
export function swapLinks(
  user: SystemUser,
  dir: string,
  victims: readonly [string, string],
  ms: number,
): { end: number; child: ChildProcess; exited: Promise<number | null> } {
  const end = Date.now() + ms;
  const child = spawn(
    'setpriv',
    [
      ...['--reuid', String(user.uid), '--regid', String(user.gid), '--clear-groups'],
      ...[process.execPath, '-e', SWAP, dir, victims[0], victims[1], String(end)],
    ],
    { stdio: 'ignore', env: {} },
  );
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  return { end, child, exited };
}

/**
 * An input directory `<parent>/<name>` owned by `user`: `files` record files `f<i>` and
 * `subdirs` subdirectories `d<i>` of 20 files each. Made aside (the loop only looks at `in-*`)
 * and renamed into place, so the loop cannot disturb its making.
 */
export function userInput(
  parent: string,
  name: string,
  user: SystemUser,
  shape: { files: number; subdirs: number },
): void {
  const own = (p: string) => chownSync(p, user.uid, user.gid);
  const aside = join(parent, `.new-${name}`);
  const fill = (dir: string, count: number, text: string) => {
    for (let f = 0; f < count; f++) writeFileSync(join(dir, `f${f}`), text);
    for (let f = 0; f < count; f++) own(join(dir, `f${f}`));
  };
  mkdirSync(aside);
  fill(aside, shape.files, 'record\n');
  for (let d = 0; d < shape.subdirs; d++) {
    mkdirSync(join(aside, `d${d}`));
    fill(join(aside, `d${d}`), 20, 'x');
    own(join(aside, `d${d}`));
  }
  own(aside);
  renameSync(aside, join(parent, name));
}

/** A root-only directory of `files` files `v<i>` holding `victim <i>`. */
export function victimDir(dir: string, files: number): string {
  mkdirSync(dir, { mode: 0o700 });
  for (let i = 0; i < files; i++) writeFileSync(join(dir, `v${i}`), `victim ${i}`);
  return dir;
}

/** Whether a victim directory still holds exactly what {@link victimDir} put there. */
export function victimIntact(dir: string, files: number): boolean {
  const names = readdirSync(dir);
  if (names.length !== files) return false;
  for (let i = 0; i < files; i++)
    if (readFileSync(join(dir, `v${i}`), 'utf8') !== `victim ${i}`) return false;
  return true;
}
