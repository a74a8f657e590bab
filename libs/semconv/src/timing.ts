import type { DecodedSpan } from '@spanforge/otlp';
import { readNumber } from './attribute-read';

/** Time to first chunk in seconds: OTel GenAI v1.41, Vercel AI SDK v7 (vercel/ai packages/otel/src/open-telemetry.ts), OpenLIT's two names. */
const SECONDS_KEYS = [
  'gen_ai.response.time_to_first_chunk',
  'gen_ai.client.operation.time_to_first_chunk',
  'gen_ai.server.time_to_first_token',
  'gen_ai.server.ttft',
] as const;
/** In milliseconds: Vercel AI SDK legacy doStream span and its ai.stream.firstChunk event (AI SDK telemetry docs). */
const MILLISECONDS_KEYS = ['ai.response.msToFirstChunk', 'ai.stream.msToFirstChunk'] as const;

function nonNegative(ms: number | undefined): number | undefined {
  return ms !== undefined && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** Langfuse completion_start_time: ISO time; older SDKs JSON-encode it twice ("\"2025-…Z\"", Langfuse handles it in extractCompletionStartTime). */
function langfuseCompletionStart(span: DecodedSpan): number | undefined {
  const raw = span.attributes['langfuse.observation.completion_start_time'];
  if (typeof raw !== 'string' || raw === '') return undefined;
  const iso = raw.charCodeAt(0) === 0x22 ? raw.slice(1, -1) : raw;
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return undefined;
  // Microseconds stay exact in a double; nanoseconds since 1970 would not.
  return nonNegative(at - Number(span.startTimeUnixNano / 1000n) / 1000);
}

/**
 * A first-token event: Vercel `ai.stream.firstChunk`, OpenInference LangChain
 * `First Token Stream Event`, `gen_ai.first_token`, `first_token`, ... Events are few per span,
 * and only their names are compared.
 */
function isFirstTokenEvent(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.includes('first') && (lower.includes('token') || lower.includes('chunk'));
}

/**
 * OpenLLMetry's streaming wrappers add one event per received chunk and no first-token event or
 * attribute (traceloop/openllmetry opentelemetry-instrumentation-openai chat_wrappers.py
 * `_process_item`: `span.add_event(name=SpanAttributes.LLM_CONTENT_COMPLETION_CHUNK)`). The
 * constant was `llm.content.completion.chunk` in older opentelemetry-semantic-conventions-ai and is
 * `gen_ai.content.completion.chunk` (GEN_AI_CONTENT_COMPLETION_CHUNK) since its gen_ai rename;
 * `gen_ai.completion.chunk` is the value some copies of that semconv carry. The JS SDK
 * (@traceloop/instrumentation-openai 0.27) adds no such events. The earliest one is the first chunk.
 */
const CHUNK_EVENTS: ReadonlySet<string> = new Set([
  'gen_ai.content.completion.chunk',
  'llm.content.completion.chunk',
  'gen_ai.completion.chunk',
]);

/** The time of the earliest streamed-chunk event, in ns since the epoch, or undefined. */
function firstChunkEventNano(span: DecodedSpan): bigint | undefined {
  let first: bigint | undefined;
  for (const event of span.events) {
    if (CHUNK_EVENTS.has(event.name) && (first === undefined || event.timeUnixNano < first)) first = event.timeUnixNano;
  }
  return first;
}

/** Time to first token/chunk in ms, from an attribute, else from a first-token event's time, else from the first streamed-chunk event. */
export function readTtftMs(span: DecodedSpan): number | undefined {
  const a = span.attributes;
  for (const key of SECONDS_KEYS) {
    const seconds = nonNegative(readNumber(a, key));
    if (seconds !== undefined) return seconds * 1000;
  }
  for (const key of MILLISECONDS_KEYS) {
    const ms = nonNegative(readNumber(a, key));
    if (ms !== undefined) return ms;
  }
  const fromLangfuse = langfuseCompletionStart(span);
  if (fromLangfuse !== undefined) return fromLangfuse;
  for (const event of span.events) {
    if (isFirstTokenEvent(event.name)) return nonNegative(Number(event.timeUnixNano - span.startTimeUnixNano) / 1e6);
  }
  const firstChunk = firstChunkEventNano(span);
  return firstChunk === undefined ? undefined : nonNegative(Number(firstChunk - span.startTimeUnixNano) / 1e6);
}
