import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isLoopback } from './options.js';

/**
 * The token a request carries: `Authorization: Bearer <token>`, or `?token=` (the printed URL,
 * the page's assets, the event stream, which cannot set headers). Never a cookie: cookies are
 * scoped by host, not by port, so any other program serving a page on this host would receive
 * one, and could replay it here.
 */
function presented(req: IncomingMessage, url: URL): string | null {
  const header = req.headers.authorization;
  if (typeof header === 'string') {
    const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
    if (match) return match[1]!;
  }
  return url.searchParams.get('token');
}

/** Constant-time comparison, so the token cannot be guessed byte by byte from timings. */
export function tokenMatches(expected: string, given: string | null): boolean {
  if (given === null) return false;
  const expectedBytes = Buffer.from(expected);
  const givenBytes = Buffer.from(given);
  return expectedBytes.length === givenBytes.length && timingSafeEqual(expectedBytes, givenBytes);
}

export type Refusal = { status: number; message: string } | null;

/**
 * Whether a request may proceed. With a token, every request must carry it. Without one (only
 * allowed on loopback), the Host header must name a loopback address: a web page elsewhere
 * that rebinds its DNS name to 127.0.0.1 then still cannot read the API.
 */
export function checkAccess(req: IncomingMessage, url: URL, token: string | null): Refusal {
  if (token !== null) {
    return tokenMatches(token, presented(req, url))
      ? null
      : {
          status: 401,
          message:
            'missing or wrong access token: open the URL zoott printed (with ?token=), or send Authorization: Bearer <token>',
        };
  }
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  if (!isLoopback(host))
    return { status: 403, message: `Host ${host || '(none)'} is not a loopback name` };
  return null;
}

/**
 * Changes must come as JSON from this page: a cross-site form can send neither a JSON content
 * type (without a CORS preflight, which is never answered) nor a foreign-origin request
 * that passes the Origin check.
 */
export function checkWriteRequest(req: IncomingMessage): Refusal {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type))
    return { status: 415, message: 'send changes with Content-Type: application/json' };
  const origin = req.headers.origin;
  if (origin && origin !== 'null') {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return { status: 403, message: `bad Origin ${origin}` };
    }
    if (originHost !== req.headers.host)
      return { status: 403, message: `cross-origin request from ${origin} refused` };
  } else if (origin === 'null') {
    return { status: 403, message: 'requests from an opaque origin are refused' };
  }
  return null;
}
