import { INT32_MAX, type Attributes, type DecodedSpan } from '@spanforge/otlp';
import { firstString } from './attribute-read';

/**
 * The three public session id keys first, in the API's documented order, then SDK-specific ones
 * (Langfuse extractSessionId, Vercel telemetry metadata, Traceloop AssociationProperty.SESSION_ID).
 * The Vercel AI SDK 7 has no telemetry metadata any more: an application passes its ids as
 * `runtimeContext` (with `telemetry.includeRuntimeContext`), which @ai-sdk/otel writes as
 * `ai.settings.context.<key>` on the invoke_agent and step spans (vercel/ai packages/otel/src
 * supplemental-attributes.ts getRuntimeContextAttributes; LegacyOpenTelemetry writes the same keys).
 */
const SESSION_KEYS = [
  'session.id',
  'gen_ai.conversation.id',
  'langfuse.session.id',
  'ai.telemetry.metadata.sessionId',
  'ai.settings.context.sessionId',
  'traceloop.association.properties.session_id',
] as const;

const USER_KEYS = [
  'user.id',
  'enduser.id',
  'langfuse.user.id',
  'ai.telemetry.metadata.userId',
  'ai.settings.context.userId',
  'traceloop.association.properties.user_id',
] as const;

/**
 * No convention defines a run id (one agent invocation, which may span retried traces). These are
 * the names an application sets by hand: a plain `run.id`, its gen_ai-namespaced variant, and the
 * same key through each SDK's metadata mechanism (Vercel telemetry metadata or v7 runtime context,
 * Traceloop association properties, Langfuse observation metadata).
 */
const RUN_KEYS = [
  'run.id',
  'gen_ai.run.id',
  'ai.telemetry.metadata.runId',
  'ai.settings.context.runId',
  'traceloop.association.properties.run_id',
  'langfuse.observation.metadata.run_id',
] as const;

export interface SpanIds {
  sessionId: string;
  userId: string;
  runId: string;
}

function spanOrResource(span: DecodedSpan, keys: readonly string[]): string {
  return firstString(span.attributes, keys) ?? firstString(span.resource.attributes, keys) ?? '';
}

/**
 * The ids this span states, on its own attributes first, then on its resource (a trace's session id
 * may come from any span of the trace or its resource). The trace-level pick across spans is the
 * rollup's job.
 */
export function readIds(span: DecodedSpan): SpanIds {
  return { sessionId: spanOrResource(span, SESSION_KEYS), userId: spanOrResource(span, USER_KEYS), runId: spanOrResource(span, RUN_KEYS) };
}

/** Whole iterations stated on the span (agent.iterations or gen_ai.agent.iterations), up to the stored Int32's limit. */
export function readIterations(a: Attributes): number | undefined {
  for (const key of ['agent.iterations', 'gen_ai.agent.iterations']) {
    const raw = a[key];
    const value = typeof raw === 'string' && raw !== '' ? Number(raw) : raw;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= INT32_MAX) return value;
  }
  return undefined;
}
