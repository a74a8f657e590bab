import { randomBytes } from 'node:crypto';

/*
 * Hand-made OTLP/JSON exports for tests that need values no SDK would send (times in 1970 or
 * 2262, token counts of 2^63 − 1): the exporters validate or convert what they are given.
 */

export type JsonAnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

export interface JsonSpanInput {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  /** Nanoseconds since the epoch. */
  start: bigint;
  end: bigint;
  attributes?: Record<string, JsonAnyValue>;
  events?: Array<{ timeUnixNano: string; name: string }>;
}

export const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export const NS_PER_MS = 1_000_000n;

export function nanosOf(iso: string): bigint {
  return BigInt(Date.parse(iso)) * NS_PER_MS;
}

export function jsonSpan(input: JsonSpanInput): Record<string, unknown> {
  return {
    traceId: input.traceId ?? hex(16),
    spanId: input.spanId ?? hex(8),
    ...(input.parentSpanId ? { parentSpanId: input.parentSpanId } : {}),
    name: input.name ?? 'span',
    kind: 1,
    startTimeUnixNano: input.start.toString(),
    endTimeUnixNano: input.end.toString(),
    attributes: Object.entries(input.attributes ?? {}).map(([key, value]) => ({ key, value })),
    events: input.events ?? [],
  };
}

/** One ExportTraceServiceRequest of these spans under one resource and scope, as UTF-8 JSON bytes. */
export function jsonExport(spans: Array<Record<string, unknown>>, serviceName = 'poison-test'): Buffer {
  return Buffer.from(
    JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: serviceName } }] },
          scopeSpans: [{ scope: { name: 'test' }, spans }],
        },
      ],
    }),
  );
}

/** An ordinary LLM trace of `count` spans (a root and its calls) starting now: what an innocent tenant sends. */
export function innocentTrace(count: number): { spans: Array<Record<string, unknown>>; traceId: string; inputTokens: number } {
  const traceId = hex(16);
  const rootId = hex(8);
  const start = BigInt(Date.now()) * NS_PER_MS;
  const spans = [jsonSpan({ traceId, spanId: rootId, name: 'agent.run', start, end: start + BigInt(count) * 10n * NS_PER_MS })];
  let inputTokens = 0;
  for (let i = 1; i < count; i++) {
    inputTokens += 100 + i;
    spans.push(
      jsonSpan({
        traceId,
        parentSpanId: rootId,
        name: 'chat gpt-4o-mini',
        start: start + BigInt(i) * 10n * NS_PER_MS,
        end: start + BigInt(i) * 10n * NS_PER_MS + 5n * NS_PER_MS,
        attributes: {
          'gen_ai.operation.name': { stringValue: 'chat' },
          'gen_ai.request.model': { stringValue: 'gpt-4o-mini' },
          'gen_ai.usage.input_tokens': { intValue: String(100 + i) },
          'gen_ai.usage.output_tokens': { intValue: '10' },
        },
      }),
    );
  }
  return { spans, traceId, inputTokens };
}
