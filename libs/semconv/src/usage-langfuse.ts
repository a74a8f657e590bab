import type { Attributes } from '@spanforge/otlp';
import { readJsonObject, toCount as count } from './attribute-read';
import { fromInclusive, type UsageReading } from './usage-buckets';

/**
 * Langfuse `langfuse.observation.usage_details`: a JSON map of usage type → count whose entries
 * are disjoint — Langfuse's own input total is the sum of every key containing "input"
 * (langfuse/langfuse packages/shared/src/server/repositories/observations_converters.ts
 * reduceUsageOrCostDetails), and its OTel mapper subtracts cache and reasoning from the GenAI
 * totals before storing `input`/`output` (packages/shared/src/server/otel/OtelIngestionProcessor.ts
 * extractGenericGenAiUsageDetails).
 * So keys map straight onto our buckets. The JS SDK also accepts OpenAI's usage object
 * (prompt_tokens includes cached_tokens, completion_tokens includes reasoning_tokens).
 */

function nested(details: Record<string, unknown>, key: string, inner: string): number | undefined {
  const value = details[key];
  return value !== null && typeof value === 'object' && Object.hasOwn(value, inner)
    ? count((value as Record<string, unknown>)[inner])
    : undefined;
}

function openAiShaped(details: Record<string, unknown>): UsageReading {
  return fromInclusive(
    count(details.prompt_tokens) ?? 0,
    nested(details, 'prompt_tokens_details', 'cached_tokens') ?? 0,
    0,
    count(details.completion_tokens) ?? 0,
    nested(details, 'completion_tokens_details', 'reasoning_tokens') ?? 0,
  );
}

export function langfuseUsage(a: Attributes): UsageReading | undefined {
  if (!('langfuse.observation.usage_details' in a)) return undefined;
  const details = readJsonObject(a, 'langfuse.observation.usage_details');
  if (details === undefined) return undefined;
  if (Object.hasOwn(details, 'prompt_tokens') || Object.hasOwn(details, 'completion_tokens')) return openAiShaped(details);

  const usage = { inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
  let found = false;
  for (const [rawKey, rawValue] of Object.entries(details)) {
    const n = count(rawValue);
    const key = rawKey.toLowerCase();
    if (n === undefined || key === 'total') continue;
    // Langfuse names: input, output, input_cached_tokens, cache_read_input_tokens, input_cache_read,
    // cache_creation_input_tokens, input_cache_creation(_5m|_1h), input_cache_write, output_reasoning(_tokens).
    if (key.includes('cache')) {
      if (key.includes('creation') || key.includes('write')) usage.cacheWrite += n;
      else usage.cacheRead += n;
    } else if (key.includes('reasoning')) usage.reasoning += n;
    else if (key.includes('input') || key.startsWith('prompt'))
      usage.inputUncached += n; // input, input_audio, promptTokens (v2 SDK)
    else if (key.includes('output') || key.startsWith('completion')) usage.output += n;
    else continue; // totals and unknown units (images, characters) are not tokens
    found = true;
  }
  return found ? { usage, found } : undefined;
}
