/** Writes into ZooKeeper as another, independent client would: Debian's zkCli.sh. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const ZKCLI = '/usr/share/zookeeper/bin/zkCli.sh';
const run = promisify(execFile);

/** `create <path> <data>` through zkCli.sh against `server` (no chroot: give full paths). */
export async function zkCliCreate(server: string, path: string, data: string): Promise<void> {
  const { stdout, stderr } = await run(ZKCLI, ['-server', server, 'create', path, data], {
    timeout: 60_000,
  });
  const out = `${stdout}\n${stderr}`;
  if (!out.includes(`Created ${path}`))
    throw new Error(`zkCli.sh did not create ${path}:\n${out.slice(-2000)}`);
}
