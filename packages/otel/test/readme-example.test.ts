import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type OtlpReceiver, spansOf, startOtlpReceiver, until } from '@zoott/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

// The root README's tracing example, run as written: its SDK exports OTLP/HTTP JSON to the
// receiver this test runs (OTEL_EXPORTER_OTLP_ENDPOINT), and what arrives is one trace.
const rootReadme = fileURLToPath(new URL('../../../README.md', import.meta.url));
// Inside this package, so the example's imports resolve as they would in an application.
const scratchRoot = fileURLToPath(new URL('../node_modules/.readme-examples', import.meta.url));

function example(heading: string): string {
  const text = readFileSync(rootReadme, 'utf8');
  const at = text.indexOf(heading);
  const match = at < 0 ? null : /```ts\n([\s\S]*?)\n```/.exec(text.slice(at));
  if (!match?.[1]) throw new Error(`README.md: no \`\`\`ts block under "${heading}"`);
  return match[1];
}

let receiver: OtlpReceiver;
let dir: string;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  mkdirSync(scratchRoot, { recursive: true });
  dir = mkdtempSync(join(scratchRoot, 'run-'));
});
afterAll(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

it("the README's tracing example sends one trace: the checkout, the invoice and its mail", async () => {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  const file = join(dir, 'tracing.ts');
  writeFileSync(file, example('## Tracing across the tree'));
  await import(/* @vite-ignore */ file);
  // The example ends by shutting the provider down, which sends the last spans.
  const spans = await until('the mail task to be settled, as a span', () => {
    const got = spansOf(receiver.requests);
    return got.some((s) => s.name === 'settle mail') ? got : undefined;
  });
  const one = (name: string) => {
    const found = spans.filter((s) => s.name === name);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };
  const checkout = one('checkout');
  expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([checkout.traceId]));
  const queued = one('queue invoice');
  const run = one('run invoice');
  expect(queued.parentSpanId).toBe(checkout.spanId);
  expect(one('wait invoice').parentSpanId).toBe(queued.spanId);
  expect(run.parentSpanId).toBe(queued.spanId);
  expect(one('settle invoice').parentSpanId).toBe(run.spanId);
  const mail = one('queue mail');
  expect(mail.parentSpanId).toBe(run.spanId);
  expect(one('run mail').parentSpanId).toBe(mail.spanId);
  expect(one('run mail').attributes).toMatchObject({
    'zoott.world': 'shop',
    'zoott.task.key': 'invoice_42|mail',
    'zoott.task.outcome': 'completed',
  });
});
