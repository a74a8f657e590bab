/**
 * Decode throughput of both decoders on OTel-JS-serialized batches of small spans (spec target:
 * ≥ 500k spans/s/core for protobuf). Run: `node scripts/build.mjs && node dist/libs/otlp/bench/decode.bench.js`.
 */
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { decodeJsonExport, decodeProtobufExport } from '../src';

const SPANS_PER_REQUEST = 512;
const SECONDS_PER_RUN = 2;

function hex(length: number, seed: number): string {
  let text = '';
  while (text.length < length) text += ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8).toString(16).padStart(6, '0');
  return text.slice(0, length);
}

/** A typical small span: ids, parent, kind, times, five attributes, an OK status. */
function smallSpans(count: number): ReadableSpan[] {
  const resource = resourceFromAttributes({ 'service.name': 'checkout', 'service.version': '1.4.2', 'host.name': 'pod-7f9c' });
  const instrumentationScope = { name: '@opentelemetry/instrumentation-http', version: '0.301.0' };
  const traceId = hex(32, 1);
  return Array.from({ length: count }, (_, index) => ({
    name: index % 2 ? 'GET /api/cart' : 'chat gpt-4o-mini',
    kind: index % 3,
    spanContext: () => ({ traceId, spanId: hex(16, index + 7), traceFlags: 1 }),
    parentSpanContext: { traceId, spanId: hex(16, index + 3), traceFlags: 1 },
    startTime: [1_700_000_000 + index, 1000 * index] as [number, number],
    endTime: [1_700_000_001 + index, 5000] as [number, number],
    status: { code: 1 },
    attributes: {
      'http.method': 'GET',
      'http.status_code': 200,
      'gen_ai.usage.input_tokens': 1234,
      'gen_ai.request.model': 'gpt-4o-mini',
      'user.id': `user-${index}`,
    },
    links: [],
    events: [],
    duration: [1, 0] as [number, number],
    ended: true,
    resource,
    instrumentationScope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  }));
}

function measure(label: string, decode: () => number): void {
  for (let warmup = 0; warmup < 200; warmup++) decode();
  let spans = 0;
  const started = process.hrtime.bigint();
  const budget = BigInt(SECONDS_PER_RUN * 1e9);
  let elapsed = 0n;
  while (elapsed < budget) {
    spans += decode();
    elapsed = process.hrtime.bigint() - started;
  }
  const perSecond = Math.round(spans / (Number(elapsed) / 1e9));
  console.log(`${label}: ${perSecond.toLocaleString('en-US')} spans/s (${spans} spans in ${(Number(elapsed) / 1e9).toFixed(2)} s)`);
}

const spans = smallSpans(SPANS_PER_REQUEST);
const protobufBody = ProtobufTraceSerializer.serializeRequest(spans)!;
const jsonBody = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)!);
console.log(
  `node ${process.version}, ${SPANS_PER_REQUEST} spans per request: protobuf ${protobufBody.length} bytes, JSON ${jsonBody.length} bytes`,
);
measure('protobuf', () => decodeProtobufExport(protobufBody).spans.length);
measure('json    ', () => decodeJsonExport(jsonBody).spans.length);
