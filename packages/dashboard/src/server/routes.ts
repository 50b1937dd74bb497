import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError } from './http.js';

/** Answers one request of a route. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

/** The methods a route answers; HEAD is answered as GET. */
export type RouteMethod = 'GET' | 'POST';

/** Every path the dashboard serves, with its handler per method. */
export type RouteTable = Readonly<Record<string, Partial<Record<RouteMethod, RouteHandler>>>>;

/**
 * Routes a request by its path, then its method: an unknown path is 404 `NOT_FOUND`, a known
 * path asked with a method it does not answer is 405 with the methods it does in `Allow`.
 */
export async function dispatch(
  routes: RouteTable,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const route = Object.hasOwn(routes, url.pathname) ? routes[url.pathname] : undefined;
  if (!route)
    return sendError(
      res,
      404,
      'NOT_FOUND',
      `no such page or endpoint: ${req.method} ${url.pathname}`,
    );
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const handler = method === 'GET' || method === 'POST' ? route[method] : undefined;
  if (!handler) {
    const allowed = Object.keys(route) as RouteMethod[];
    res.setHeader('Allow', (allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed).join(', '));
    return sendError(
      res,
      405,
      'BAD_ARGUMENTS',
      `method ${req.method} not allowed on ${url.pathname} (allowed: ${allowed.join(', ')})`,
    );
  }
  return handler(req, res, url);
}
