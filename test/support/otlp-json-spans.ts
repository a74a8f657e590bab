import type { Attributes, AttributeValue, HrTime, SpanKind } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

/*
 * An OTLP/JSON trace export (a fixture of what a library we cannot run here sends) as the OTel JS
 * SDK's ReadableSpans, so the real OTel protobuf serializer can put it on the wire as that
 * library's exporter would: the fixture stays readable, the request stays binary.
 */

type Json = Record<string, unknown>;

/** An OTLP/JSON AnyValue as an attribute value (kvlists as plain objects, which the OTel serializer writes back as kvlists). */
export function plainOfAnyValue(value: Json | undefined): unknown {
  if (!value) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('boolValue' in value) return value.boolValue;
  if ('arrayValue' in value) return ((value.arrayValue as { values?: Json[] }).values ?? []).map(plainOfAnyValue);
  if ('kvlistValue' in value)
    return Object.fromEntries(
      ((value.kvlistValue as { values?: Json[] }).values ?? []).map((kv) => [kv.key, plainOfAnyValue(kv.value as Json)]),
    );
  return undefined;
}

export function attributesOfJson(list: unknown): Attributes {
  return Object.fromEntries(
    ((list as Json[] | undefined) ?? []).map((kv) => [kv.key as string, plainOfAnyValue(kv.value as Json) as AttributeValue]),
  );
}

function hrTime(nanos: unknown): HrTime {
  const n = BigInt(String(nanos ?? '0'));
  return [Number(n / 1_000_000_000n), Number(n % 1_000_000_000n)];
}

/** Every span of an OTLP/JSON ExportTraceServiceRequest, with its resource and scope. */
export function readableSpansOfJson(request: { resourceSpans?: unknown[] }): ReadableSpan[] {
  const spans: ReadableSpan[] = [];
  for (const resourceSpans of (request.resourceSpans ?? []) as Json[]) {
    const resource = resourceFromAttributes(attributesOfJson((resourceSpans.resource as Json | undefined)?.attributes));
    for (const scopeSpans of (resourceSpans.scopeSpans ?? []) as Json[]) {
      const scope = (scopeSpans.scope ?? {}) as Json;
      const instrumentationScope = {
        name: String(scope.name ?? ''),
        version: String(scope.version ?? ''),
        schemaUrl: scopeSpans.schemaUrl as string,
      };
      for (const span of (scopeSpans.spans ?? []) as Json[]) {
        const status = (span.status ?? {}) as Json;
        const startTime = hrTime(span.startTimeUnixNano);
        const endTime = hrTime(span.endTimeUnixNano);
        const traceId = String(span.traceId);
        spans.push({
          name: String(span.name),
          kind: (Number(span.kind ?? 0) - 1) as SpanKind,
          spanContext: () => ({ traceId, spanId: String(span.spanId), traceFlags: 1 }),
          parentSpanContext: span.parentSpanId ? { traceId, spanId: String(span.parentSpanId), traceFlags: 1 } : undefined,
          startTime,
          endTime,
          duration: [endTime[0] - startTime[0], endTime[1] - startTime[1]],
          status: { code: Number(status.code ?? 0), message: status.message as string | undefined },
          attributes: attributesOfJson(span.attributes),
          links: [],
          events: ((span.events as Json[] | undefined) ?? []).map((event) => ({
            name: String(event.name),
            time: hrTime(event.timeUnixNano),
            attributes: attributesOfJson(event.attributes),
          })),
          ended: true,
          resource,
          instrumentationScope,
          droppedAttributesCount: 0,
          droppedEventsCount: 0,
          droppedLinksCount: 0,
        });
      }
    }
  }
  return spans;
}
