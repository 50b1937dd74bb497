// A second, unprivileged user of the host for the tests that need one (a job's user, another
// user who plants files): made with useradd when the suite starts, removed when it ends.
import { execFileSync } from 'node:child_process';

/** A system user made for a test. */
export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
  /** Removes the user (and its group). Safe to call twice. */
  remove(): void;
}

/**
 * Makes system user `name` (no home, no login shell), or takes it as it is when a run that
 * was killed left it behind. Root only.
 */
export function makeSystemUser(name: string): SystemUser {
  if (process.getuid?.() !== 0)
    throw new Error(`making user ${name} needs root (these tests run as root, in CI too)`);
  try {
    execFileSync('id', ['-u', name], { stdio: 'pipe' });
  } catch {
    execFileSync('useradd', [
      ...['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent'],
      ...['--shell', '/usr/sbin/nologin', name],
    ]);
  }
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  let removed = false;
  return {
    name,
    uid: id('-u'),
    gid: id('-g'),
    remove() {
      if (removed) return;
      removed = true;
      try {
        execFileSync('userdel', [name], { stdio: 'pipe' });
      } catch {
        // Gone already.
      }
    },
  };
}
