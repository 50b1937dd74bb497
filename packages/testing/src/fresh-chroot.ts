import { randomUUID } from 'node:crypto';
import { connectZk } from '@zoott/zk-adapter';

/**
 * Creates `/<prefix>-<uuid>` on a shared test server, so a test (or a test file) gets a
 * namespace of its own, and returns the chroot and the connect string that includes it.
 */
export async function freshChroot(
  server: string,
  prefix = 't',
): Promise<{ chroot: string; connectString: string }> {
  const chroot = `/${prefix}-${randomUUID()}`;
  const admin = await connectZk(server);
  try {
    await admin.create(chroot);
  } finally {
    await admin.close();
  }
  return { chroot, connectString: `${server}${chroot}` };
}
