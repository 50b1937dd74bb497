import type { IncomingMessage, ServerResponse } from 'node:http';
import { isZoottError, ZoottError } from '@zoott/core';

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  // Everything comes from this server; no CDN, no inline script.
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

export function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  type: string,
  cache = 'no-store',
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': cache,
  });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), 'application/json; charset=utf-8');
}

export function sendError(res: ServerResponse, status: number, code: string, message: string) {
  sendJson(res, status, { error: { code, message } });
}

export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  // Reconnect quickly after a drop; EventSource's default is several seconds.
  res.write('retry: 1000\n\n');
}

const STATUS_BY_CODE: Record<string, number> = {
  BAD_ARGUMENTS: 400,
  INVALID_TASK: 400,
  INVALID_CONFIG: 400,
  INVALID_PATH: 400,
  INVALID_PATTERN: 400,
  NO_SUCH_TASK: 404,
  WORLD_NOT_INITIALISED: 404,
  NO_NODE: 404,
  TASK_STATE: 409,
  NO_AUTH: 403,
  CONNECTION_LOSS: 503,
  OPERATION_TIMEOUT: 503,
  SESSION_EXPIRED: 503,
  NO_ZOOKEEPER: 503,
  CLOSED: 503,
};

/** Maps an error to a JSON error reply: zoott codes keep their code, the rest are 500s. */
export function sendFailure(res: ServerResponse, err: unknown): void {
  if (isZoottError(err)) {
    sendError(res, STATUS_BY_CODE[err.code] ?? 500, err.code, err.message);
  } else {
    sendError(res, 500, 'INTERNAL', err instanceof Error ? err.message : String(err));
  }
}

const MAX_BODY = 64 * 1024;

/** Reads a small JSON object body; BAD_ARGUMENTS for anything else. */
export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY)
      throw new ZoottError('BAD_ARGUMENTS', `request body over ${MAX_BODY} bytes`, {
        field: 'body',
      });
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ZoottError('BAD_ARGUMENTS', 'request body is not valid JSON', { field: 'body' });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new ZoottError('BAD_ARGUMENTS', 'request body must be a JSON object', { field: 'body' });
  return value as Record<string, unknown>;
}
