/**
 * Test input made by the real OpenTelemetry JS SDK types and serializers, the source of truth for
 * what exporters send. Spec files only; nothing here is exported from the lib.
 */
import type { HrTime, Link, SpanContext, TraceState } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import type { AttributeValue, Attributes } from '../otlp.model';

type Writable<T> = { -readonly [K in keyof T]: T[K] };
export type SpanInput = Writable<Omit<ReadableSpan, 'spanContext'>> & { context: SpanContext };

/** Every AnyValue kind the SDK can hand over, including nesting, bytes and non-ASCII text. */
export const ALL_VALUE_KINDS = {
  'gen_ai.request.model': 'gpt-4o-mini',
  'text.unicode': 'Grüße, 世界 — 🚀 réponse',
  'text.long': 'x'.repeat(300),
  'flag.true': true,
  'flag.false': false,
  'int.small': 42,
  'int.negative': -1234567,
  'int.max_safe': Number.MAX_SAFE_INTEGER,
  'int.min_safe': Number.MIN_SAFE_INTEGER,
  'int.beyond_safe': 2 ** 60,
  'double.plain': 0.125,
  'double.nan': Number.NaN,
  'double.infinity': Number.POSITIVE_INFINITY,
  'double.negative_infinity': Number.NEGATIVE_INFINITY,
  'bytes.value': Uint8Array.of(0, 1, 2, 250, 251, 252, 253, 254, 255),
  'array.mixed': ['a', 1, 2.5, true, Uint8Array.of(9)],
  'array.empty': [],
  'kvlist.nested': { role: 'user', parts: [{ type: 'text', content: 'hi' }], meta: { depth: { level: 3 } } },
  'kvlist.empty': {},
};

let idSeed = 0x5eed;

/** A fresh random-looking lowercase hex id of `bytes` bytes, never all zero. */
export function nextId(bytes: 8 | 16): string {
  let hex = '';
  while (hex.length < bytes * 2) {
    idSeed = (Math.imul(idSeed, 1103515245) + 12345) >>> 0;
    hex += (idSeed >>> 8).toString(16).padStart(6, '0');
  }
  return hex.slice(0, bytes * 2 - 2) + 'a1';
}

/** A W3C tracestate as the SDK hands it to the serializer (only serialize() is used). */
export function traceState(serialized: string): TraceState {
  const state: TraceState = { set: () => state, unset: () => state, get: () => undefined, serialize: () => serialized };
  return state;
}

export const DEFAULT_RESOURCE = resourceFromAttributes({ 'service.name': 'checkout', 'deployment.environment': 'test' });
export const DEFAULT_SCOPE = { name: '@spanforge/test', version: '1.0.0' };

/** A ReadableSpan with sensible defaults: a valid root span of one second. */
export function readableSpan(overrides: Partial<SpanInput> = {}): ReadableSpan {
  const input: SpanInput = {
    name: 'operation',
    kind: 0,
    context: { traceId: nextId(16), spanId: nextId(8), traceFlags: 1 },
    parentSpanContext: undefined,
    startTime: [1_700_000_000, 250_000_000],
    endTime: [1_700_000_001, 750_000_000],
    status: { code: 0 },
    attributes: {},
    links: [],
    events: [],
    duration: [1, 500_000_000],
    ended: true,
    resource: DEFAULT_RESOURCE,
    instrumentationScope: DEFAULT_SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...overrides,
  };
  const { context, ...span } = input;
  return { ...span, spanContext: () => context };
}

export function link(overrides: Partial<Link> = {}): Link {
  return { context: { traceId: nextId(16), spanId: nextId(8), traceFlags: 0 }, attributes: {}, droppedAttributesCount: 0, ...overrides };
}

export function event(overrides: Partial<TimedEvent> = {}): TimedEvent {
  return { name: 'event', time: [1_700_000_000, 500_000_000], attributes: {}, droppedAttributesCount: 0, ...overrides };
}

export function toProtobuf(spans: ReadableSpan[]): Uint8Array {
  const bytes = ProtobufTraceSerializer.serializeRequest(spans);
  if (!bytes) throw new Error('the OTel protobuf serializer returned nothing');
  return bytes;
}

export function toJson(spans: ReadableSpan[]): string {
  const bytes = JsonTraceSerializer.serializeRequest(spans);
  if (!bytes) throw new Error('the OTel JSON serializer returned nothing');
  return new TextDecoder().decode(bytes);
}

/** HrTime [seconds, nanoseconds] as the unix nanoseconds OTLP carries. */
export function nanosOf(time: HrTime): bigint {
  return BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
}

/**
 * What our decoders should make of an SDK attribute value, by otlp.model.ts's rules: integers
 * stay numbers when safe (else decimal strings), bytes become base64 (computed with Node's
 * Buffer, an independent encoder), arrays and maps stay structured, null/undefined is empty.
 */
export function expectedValue(value: unknown): AttributeValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value) ? BigInt(value).toString() : value;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(expectedValue);
  return expectedAttributes(value as Record<string, unknown>);
}

export function expectedAttributes(attributes: Record<string, unknown> | undefined): Attributes {
  return Object.fromEntries(Object.entries(attributes ?? {}).map(([key, value]) => [key, expectedValue(value)]));
}

/** Span.flags as the OTel serializers build them (trace.proto SpanFlags): W3C flags, HAS_IS_REMOTE, IS_REMOTE. */
export function expectedFlags(traceFlags: number, parentIsRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | 0x100 | (parentIsRemote ? 0x200 : 0);
}
