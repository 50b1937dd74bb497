import { connect } from 'node:net';

/** How long every host must keep refusing before a connect gives up early. */
export const REFUSAL_WINDOW_MS = 1000;
/** Pause between two probe rounds within the window. */
const ROUND_GAP_MS = 250;

/** Errors that mean "nothing listens there" (or the name does not resolve), not "no answer". */
const REFUSED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** One host that refused, and how. */
export interface Refusal {
  host: string;
  port: number;
  code: string;
}

/** One TCP connect: the refusal code, or `null` when it connected or stayed silent. */
function probeOnce(host: string, port: number, silentAfterMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (result: string | null) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(null), silentAfterMs);
    socket.once('connect', () => done(null));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code && REFUSED.has(err.code) ? err.code : null),
    );
  });
}

/**
 * Watches whether every server of a connect string actively refuses connections. ZooKeeper's
 * client retries refused servers forever, so without this a typo'd port or a stopped
 * ensemble costs the whole connect timeout; with it, a connect where every host refused on
 * every try for {@link REFUSAL_WINDOW_MS} fails at once. A host that accepts, or does not
 * answer at all (a partition, a firewall that drops), ends the probe: then only the connect
 * timeout can tell.
 *
 * Resolves the refusals, or `null` as soon as some host did not refuse or `signal` aborted.
 */
export async function everyHostRefuses(
  hosts: ReadonlyArray<{ host: string; port: number }>,
  signal: AbortSignal,
): Promise<Refusal[] | null> {
  const start = Date.now();
  let last: Refusal[] = [];
  for (;;) {
    const codes = await Promise.all(hosts.map((h) => probeOnce(h.host, h.port, REFUSAL_WINDOW_MS)));
    if (signal.aborted || codes.some((c) => c === null)) return null;
    last = hosts.map((h, i) => ({ host: h.host, port: h.port, code: codes[i]! }));
    if (Date.now() - start >= REFUSAL_WINDOW_MS) return last;
    await new Promise((r) => setTimeout(r, ROUND_GAP_MS));
    if (signal.aborted) return null;
  }
}

/** `h1:2181 (ECONNREFUSED), h2:2181 (ENOTFOUND)` */
export function describeRefusals(refusals: readonly Refusal[]): string {
  return refusals.map((r) => `${r.host}:${r.port} (${r.code})`).join(', ');
}
