import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

interface Manifest {
  name: string;
  version: string;
  [field: string]: unknown;
}

/** The package.json inside a tarball: as packed, with real versions for `workspace:` ones. */
function packedManifest(tarball: string): Manifest {
  return JSON.parse(
    execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' }),
  );
}

/**
 * A minimal npm registry for the @zoott scope that serves only the given tarballs, so that
 * `npm install` (`--@zoott:registry=<url>`) takes zoott packages from this build and every
 * third-party package from the real registry. Needed for `npm install -g`, where no project
 * package.json can redirect dependencies to tarball files.
 */
export async function startScopeRegistry(tarballs: readonly string[]) {
  const packed = tarballs.map((tarball) => ({ tarball, manifest: packedManifest(tarball) }));
  const byName = new Map(packed.map((p) => [p.manifest.name, p]));
  // A path of its own per registry: npm caches packuments by URL, and a later run on the
  // same port must never be answered from the cache with an earlier build's tarballs.
  const prefix = `/${randomUUID()}/`;
  const server = http.createServer((req, res) => {
    const raw = decodeURIComponent(req.url ?? '/');
    const url = raw.startsWith(prefix) ? raw.slice(prefix.length) : '';
    const tarball = packed.find((p) => url === `-/${path.basename(p.tarball)}`);
    if (tarball) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(readFileSync(tarball.tarball));
      return;
    }
    const pkg = byName.get(url);
    if (!pkg) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `not served here: ${url}` }));
      return;
    }
    const data = readFileSync(pkg.tarball);
    const { version } = pkg.manifest;
    const packument = {
      name: pkg.manifest.name,
      'dist-tags': { latest: version },
      versions: {
        [version]: {
          ...pkg.manifest,
          dist: {
            tarball: `${base}/-/${path.basename(pkg.tarball)}`,
            shasum: createHash('sha1').update(data).digest('hex'),
            integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
          },
        },
      },
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix.slice(0, -1)}`;
  return {
    url: `${base}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
