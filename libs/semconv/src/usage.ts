import type { Attributes, DecodedSpan } from '@spanforge/otlp';
import { firstCount, readCount } from './attribute-read';
import { langfuseUsage } from './usage-langfuse';
import { fromExclusive, fromInclusive, type UsageReading } from './usage-buckets';
import { vercelUsage } from './usage-vercel';

/**
 * Token usage in exclusive buckets from whichever convention the span uses. A convention's input
 * count either includes cache reads and writes ("inclusive") or not; the buckets account for it so
 * that the API's inputTokens = inputUncached + cacheRead + cacheWrite and outputTokens = output +
 * reasoning reproduce the convention's own totals. Evidence, per convention:
 * - OTel GenAI: input_tokens includes cache read and write, output_tokens includes reasoning
 *   (gen_ai.usage.* registry; semantic-conventions-genai's Anthropic note: "input_tokens =
 *   input_tokens + cache_read + cache_write").
 * - OpenLLMetry Anthropic: inclusive, `input_tokens = prompt_tokens + cache_read_tokens +
 *   cache_creation_tokens`, since the cache counts appeared (traceloop/openllmetry #2175, Oct 2024).
 * - OpenInference: llm.token_count.prompt includes cache (Anthropic instrumentation sums them since
 *   Arize-ai/openinference #1429, Mar 2025; cache_read is OpenAI's cached_tokens subset).
 * - OpenLIT Anthropic: EXCLUSIVE — gen_ai.usage.input_tokens is Anthropic's raw input_tokens, the
 *   cache counts beside it (openlit sdk/python/.../anthropic/utils.py).
 * - Vercel AI SDK and Langfuse usage_details: see usage-vercel.ts and usage-langfuse.ts.
 * Safety net for other emitters: an inclusive total smaller than its own cache parts cannot be
 * inclusive, so it is read as the uncached count instead of being floored to zero.
 */

const GEN_AI_INPUT = ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens'] as const;
const GEN_AI_OUTPUT = ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens'] as const;
const GEN_AI_CACHE_READ = [
  'gen_ai.usage.cache_read.input_tokens',
  'gen_ai.usage.cache_read_input_tokens', // OpenLLMetry semconv-ai <= 0.4 (SpanAttributes.LLM_USAGE_CACHE_READ_INPUT_TOKENS)
  'gen_ai.usage.details.cache_read_tokens', // pydantic-ai backwards-compat detail (pydantic/pydantic-ai usage.py)
] as const;
const GEN_AI_CACHE_WRITE = [
  'gen_ai.usage.cache_write.input_tokens', // newest name (open-telemetry/semantic-conventions-genai #440)
  'gen_ai.usage.cache_creation.input_tokens', // v1.40 name
  'gen_ai.usage.cache_creation_input_tokens', // OpenLLMetry semconv-ai <= 0.4
  'gen_ai.usage.details.cache_write_tokens', // pydantic-ai
] as const;
const GEN_AI_REASONING = [
  'gen_ai.usage.reasoning.output_tokens',
  'gen_ai.usage.reasoning_tokens', // OpenLIT
  'gen_ai.usage.details.reasoning_tokens', // pydantic-ai (OpenAI details, a subset of output_tokens)
  'ai.usage.outputTokenDetails.reasoningTokens', // Vercel AI SDK v7 supplemental usage attributes
] as const;

function genAiUsage(span: DecodedSpan, provider: string): UsageReading | undefined {
  const a = span.attributes;
  const input = firstCount(a, GEN_AI_INPUT);
  const output = firstCount(a, GEN_AI_OUTPUT);
  const cacheRead = firstCount(a, GEN_AI_CACHE_READ);
  const cacheWrite = firstCount(a, GEN_AI_CACHE_WRITE);
  if (input === undefined && output === undefined && cacheRead === undefined && cacheWrite === undefined) return undefined;
  const reasoning = firstCount(a, GEN_AI_REASONING) ?? 0;
  if (provider === 'anthropic' && span.scope.name.startsWith('openlit')) {
    return fromExclusive(input ?? 0, cacheRead ?? 0, cacheWrite ?? 0, output ?? 0, reasoning);
  }
  return fromInclusive(input ?? 0, cacheRead ?? 0, cacheWrite ?? 0, output ?? 0, reasoning);
}

/** OpenInference llm.token_count.* (Arize-ai/openinference spec/semantic_conventions.md): prompt and completion are inclusive. */
function openInferenceUsage(a: Attributes): UsageReading | undefined {
  const prompt = readCount(a, 'llm.token_count.prompt');
  const completion = readCount(a, 'llm.token_count.completion');
  if (prompt === undefined && completion === undefined) return undefined;
  // cache_input is the older name of the cached-prompt subset (OpenInference LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_INPUT).
  const cacheRead = firstCount(a, ['llm.token_count.prompt_details.cache_read', 'llm.token_count.prompt_details.cache_input']) ?? 0;
  const cacheWrite = readCount(a, 'llm.token_count.prompt_details.cache_write') ?? 0;
  const reasoning = readCount(a, 'llm.token_count.completion_details.reasoning') ?? 0;
  return fromInclusive(prompt ?? 0, cacheRead, cacheWrite, completion ?? 0, reasoning);
}

/**
 * The span's own usage. Order: Langfuse usage_details (set on purpose by the SDK user), the
 * Vercel AI SDK's ai.usage.* (which knows its provider's semantics better than the gen_ai.usage.*
 * copy it also writes), OpenInference, then OTel GenAI (also OpenLLMetry, pydantic-ai, OpenLIT).
 * OpenLLMetry's llm.usage.total_tokens is never used: a total cannot be split into buckets.
 */
export function readUsage(span: DecodedSpan, provider: string): UsageReading {
  const a = span.attributes;
  return (
    langfuseUsage(a) ??
    vercelUsage(a, provider) ??
    openInferenceUsage(a) ??
    genAiUsage(span, provider) ?? { usage: { inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 }, found: false }
  );
}
