import { type OtlpReceiver, spansOf, startOtlpReceiver, until } from '@zoott/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

// zoott-amqp-bridge --trace as an operator runs it: its spans go to an OTLP/HTTP receiver this
// test runs, and a job message that carries a W3C traceparent (as an instrumented publisher
// sets it) is queued under the publisher's span.

const PUBLISHER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const PUBLISHER_SPAN = 'b7ad6b7169203331';

describe('zoott-amqp-bridge --trace', { timeout: 180_000 }, () => {
  let w: TestWorld;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    assertBuilt();
    receiver = await startOtlpReceiver();
    w = await testWorld(inject('zkConnect'));
  });
  afterAll(async () => {
    await w?.close();
    await receiver?.close();
  });

  it("queues a job message under its publisher's traceparent", async () => {
    const bridge = await w.bridge({
      ZOOTT_TRACE: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    expect(bridge.output()).toContain(
      `zoott-amqp-bridge: tracing: spans to ${receiver.url}/v1/traces (http/json)`,
    );
    await w.client.post(
      'jobs',
      { executable: '/usr/bin/true', ticket: 'traced' },
      {
        messageId: 'traced-1',
        headers: { traceparent: `00-${PUBLISHER_TRACE}-${PUBLISHER_SPAN}-01` },
      },
    );
    const queued = await until('the queue span of the job', () =>
      spansOf(receiver.requests).find((s) => s.name === 'queue zoott.job'),
    );
    expect(queued).toMatchObject({
      service: 'zoott-amqp-bridge',
      traceId: PUBLISHER_TRACE,
      parentSpanId: PUBLISHER_SPAN,
      kind: 4, // PRODUCER, as OTLP numbers span kinds
    });
    expect(queued.attributes).toMatchObject({
      'zoott.world': w.world,
      'zoott.task.type': 'zoott.job',
    });
  });
});
