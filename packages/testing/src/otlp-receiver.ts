// A stand-in for an OpenTelemetry collector: an HTTP server on loopback that records every
// OTLP/HTTP export it is sent (JSON bodies parsed, protobuf kept as bytes) and answers 200.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got. */
export interface OtlpRequest {
  path: string;
  contentType: string;
  body: Buffer;
}

/** A span as OTLP/JSON carries it, with its resource's `service.name`. */
export interface OtlpSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}

function plain(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  return value.doubleValue ?? '';
}

const attributes = (kvs: KeyValue[] | undefined) =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, plain(kv.value)]));

/** The spans of OTLP/JSON export bodies (ids as the JSON encoding has them: hex). */
export function spansOf(requests: readonly OtlpRequest[]): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  for (const request of requests) {
    if (!request.contentType.startsWith('application/json')) continue;
    const doc = JSON.parse(request.body.toString()) as {
      resourceSpans?: {
        resource?: { attributes?: KeyValue[] };
        scopeSpans?: {
          spans?: {
            traceId: string;
            spanId: string;
            parentSpanId?: string;
            name: string;
            kind: number;
            attributes?: KeyValue[];
            links?: { traceId: string; spanId: string }[];
            status?: { code?: number; message?: string };
          }[];
        }[];
      }[];
    };
    for (const rs of doc.resourceSpans ?? []) {
      const service = String(attributes(rs.resource?.attributes)['service.name'] ?? '');
      for (const ss of rs.scopeSpans ?? [])
        for (const span of ss.spans ?? [])
          out.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributes(span.attributes),
            links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
            status: span.status ?? {},
          });
    }
  }
  return out;
}

/** A receiver listening on 127.0.0.1: its base URL and what it was sent. */
export interface OtlpReceiver {
  url: string;
  requests: OtlpRequest[];
  close(): Promise<void>;
}

/** Starts a receiver on a free port of 127.0.0.1; `close()` it after the test. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        path: req.url ?? '',
        contentType: String(req.headers['content-type'] ?? ''),
        body: Buffer.concat(chunks),
      });
      // An empty ExportTraceServiceResponse, in the encoding of the request.
      const json = String(req.headers['content-type']).startsWith('application/json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
