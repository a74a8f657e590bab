import type { Attributes } from '@spanforge/otlp';

/** The values of the public GraphQL enum SpanType: clients rely on these names. */
export const SPAN_TYPES = [
  'RUN',
  'AGENT',
  'LLM',
  'TOOL',
  'RETRIEVAL',
  'EMBEDDING',
  'RERANK',
  'GUARDRAIL',
  'EVALUATION',
  'CHAIN',
  'HTTP',
  'DB',
  'OTHER',
] as const;
export type SpanType = (typeof SPAN_TYPES)[number];

/**
 * Token usage in exclusive buckets: no token is in two of them. The API's inputTokens =
 * inputUncached + cacheRead + cacheWrite; outputTokens = output + reasoning.
 */
export interface UsageBuckets {
  inputUncached: number;
  cacheRead: number;
  cacheWrite: number;
  /** Output tokens that are not reasoning tokens. */
  output: number;
  reasoning: number;
}

export interface NormalizedSpan {
  spanType: SpanType;
  /** The convention that decided spanType, e.g. 'gen_ai', 'openinference', 'openllmetry', 'vercel_ai', 'langfuse', 'http', 'db', 'default' ('logfire' on dropped placeholders). */
  convention: string;
  /** gen_ai.operation.name or its equivalent in the span's convention ('' when none). */
  operation: string;
  sessionId: string;
  userId: string;
  runId: string;
  /** The model that answered (response model first), as sent. */
  model: string;
  /** The requested model, as sent; the answering model when the span names only one. */
  modelRequested: string;
  /**
   * The key for the price table: `model` lowercased, routing prefixes stripped (`openai/gpt-4o` →
   * `gpt-4o`, `models/gemini-1.5-pro` → `gemini-1.5-pro`), Bedrock ids reduced to the model
   * (`anthropic.claude-3-5-sonnet-20240620-v1:0` → `claude-3-5-sonnet-20240620`); Azure deployment
   * names and date-less aliases left as they are.
   */
  pricingModel: string;
  /**
   * Canonical provider (provider.ts maps each vendor's spellings to one): openai, anthropic,
   * azure_openai, azure_ai_inference, aws_bedrock, google_vertex, google_gemini, google (a Gemini
   * model with no provider attribute: either API), mistral, xai, ... or ''.
   */
  provider: string;
  usage: UsageBuckets;
  /** True when the span only repeats its children's usage (agent/root/wrapper totals): it adds nothing to trace sums. */
  usageIsAggregate: boolean;
  /** A cost the span states itself (USD); it wins over the price table. */
  explicitCostUsd: number | undefined;
  /** Time to first token/chunk in milliseconds, from an attribute or a first-token event. */
  ttftMs: number | undefined;
  /** error.type, or the exception type of an exception event, when the span failed. */
  errorType: string;
  agentName: string;
  toolName: string;
  /** Agent iterations stated on the span (agent.iterations / gen_ai.agent.iterations), else undefined. */
  iterations: number | undefined;
  /** Message contents moved out of attributes (JSON text or plain text; '' when none). */
  input: string;
  output: string;
  /** The span's attributes without the content keys moved into input/output. */
  attributes: Attributes;
  /** Logfire pending spans and similar placeholders: not stored. */
  drop: boolean;
}
