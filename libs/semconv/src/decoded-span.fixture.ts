import { SpanKind, StatusCode, type AttributeValue, type Attributes, type DecodedSpan } from '@spanforge/otlp';

/** Spec support: DecodedSpan values shaped as the OTLP decoder hands them over. Not exported from the lib. */

/** 2025-07-13T05:20:00Z, the start of every fixture span. */
export const START_MS = 1_752_384_000_000;

export interface SpanInit {
  name: string;
  /** '' (the default) makes a root span. */
  parentSpanId?: string;
  kind?: SpanKind;
  scope?: string;
  attributes?: Attributes;
  resource?: Attributes;
  /** Events at an offset from the span start. */
  events?: Array<{ name: string; atMs: number; attributes?: Attributes }>;
  statusCode?: StatusCode;
  durationMs?: number;
}

const msToNano = (ms: number): bigint => BigInt(Math.round(ms * 1000)) * 1000n;

export function decodedSpan(init: SpanInit): DecodedSpan {
  const start = msToNano(START_MS);
  return {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    parentSpanId: init.parentSpanId ?? '',
    traceState: '',
    flags: 1,
    name: init.name,
    kind: init.kind ?? SpanKind.INTERNAL,
    startTimeUnixNano: start,
    endTimeUnixNano: start + msToNano(init.durationMs ?? 1500),
    attributes: init.attributes ?? {},
    droppedAttributesCount: 0,
    events: (init.events ?? []).map((event) => ({
      name: event.name,
      timeUnixNano: start + msToNano(event.atMs),
      attributes: event.attributes ?? {},
    })),
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    statusCode: init.statusCode ?? StatusCode.UNSET,
    statusMessage: '',
    resource: { attributes: { 'service.name': 'support-bot', ...init.resource }, droppedAttributesCount: 0 },
    scope: { name: init.scope ?? '', version: '1.0.0', attributes: {} },
    truncated: false,
  };
}

/** A child span id, for spans that are not the root. */
export const PARENT = 'b7ad6b7169203331';

/** The API's inputTokens (cache included) and outputTokens (reasoning included) from exclusive buckets. */
export function contractTotals(usage: {
  inputUncached: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}): { inputTokens: number; outputTokens: number } {
  return { inputTokens: usage.inputUncached + usage.cacheRead + usage.cacheWrite, outputTokens: usage.output + usage.reasoning };
}

/** Deep copy of attributes, to prove normalizeSpan leaves its input alone. */
export function snapshot(attributes: Attributes): Record<string, AttributeValue> {
  return structuredClone(attributes);
}
