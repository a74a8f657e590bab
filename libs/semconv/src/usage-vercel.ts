import type { Attributes } from '@spanforge/otlp';
import { firstCount, readCount, readJsonObject } from './attribute-read';
import { fromExclusive, fromInclusive, type UsageReading } from './usage-buckets';

/**
 * Vercel AI SDK legacy spans (`ai.*`; vercel/ai content/docs/03-ai-sdk-core/60-telemetry.mdx,
 * "Legacy AI SDK Spans"). Its usage meaning changed across majors, and in v4/v5 it even depended
 * on the provider:
 * - v6+ (LanguageModelV3Usage): input is split by the SDK itself into
 *   ai.usage.inputTokenDetails.{noCacheTokens,cacheReadTokens,cacheWriteTokens}: exclusive buckets
 *   as sent (vercel/ai packages/otel/src/legacy-open-telemetry.ts; @ai-sdk/anthropic 3.0.0
 *   convert-anthropic-messages-usage.ts sets total = input + cache write + cache read).
 * - v4 (ai.usage.promptTokens) and v5 (ai.usage.inputTokens + cachedInputTokens): the provider's
 *   raw count. Anthropic's input_tokens excludes cache (@ai-sdk/anthropic 1.2.12 promptTokens =
 *   usage.input_tokens; 2.0.x inputTokens = usage.input_tokens, cachedInputTokens =
 *   cache_read_input_tokens), and so does Bedrock Converse's inputTokens (@ai-sdk/amazon-bedrock
 *   3.0.x; "AWS reports inputTokens separately from cache reads and writes", anomalyco/opencode
 *   PR 38427). OpenAI's prompt_tokens includes cached_tokens (@ai-sdk/openai 2.0.x). Cache writes
 *   appear only in ai.response.providerMetadata, read here only when the counts above lack them.
 */

const INPUT_KEYS = ['ai.usage.inputTokens', 'ai.usage.promptTokens', 'ai.usage.tokens'] as const; // ai.usage.tokens: embeddings
const OUTPUT_KEYS = ['ai.usage.outputTokens', 'ai.usage.completionTokens'] as const;
/** The SDK's own token totals (legacy spans of every major, v7's LegacyOpenTelemetry included). */
const TOTAL_KEYS = [...INPUT_KEYS, ...OUTPUT_KEYS] as const;
const REASONING_KEYS = ['ai.usage.outputTokenDetails.reasoningTokens', 'ai.usage.reasoningTokens'] as const;
const CACHE_READ_KEYS = ['ai.usage.inputTokenDetails.cacheReadTokens', 'ai.usage.cachedInputTokens'] as const;

/** Providers whose raw input count excludes cache (see above). */
const EXCLUSIVE_INPUT_PROVIDERS: ReadonlySet<string> = new Set(['anthropic', 'aws_bedrock']);

function numberAt(root: Record<string, unknown> | undefined, path: readonly string[]): number | undefined {
  let value: unknown = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Cache and reasoning counts from ai.response.providerMetadata (the shapes Langfuse reads too: langfuse/langfuse OtelIngestionProcessor.ts). */
function providerMetadataCounts(a: Attributes): { cacheRead?: number; cacheWrite?: number; reasoning?: number } {
  const meta = readJsonObject(a, 'ai.response.providerMetadata');
  if (meta === undefined) return {};
  return {
    cacheRead:
      numberAt(meta, ['anthropic', 'cacheReadInputTokens']) ??
      numberAt(meta, ['anthropic', 'usage', 'cache_read_input_tokens']) ??
      numberAt(meta, ['bedrock', 'usage', 'cacheReadInputTokens']) ??
      numberAt(meta, ['openai', 'cachedPromptTokens']),
    cacheWrite:
      numberAt(meta, ['anthropic', 'cacheCreationInputTokens']) ??
      numberAt(meta, ['anthropic', 'usage', 'cache_creation_input_tokens']) ??
      numberAt(meta, ['bedrock', 'usage', 'cacheWriteInputTokens']),
    reasoning: numberAt(meta, ['openai', 'reasoningTokens']),
  };
}

export function vercelUsage(a: Attributes, provider: string): UsageReading | undefined {
  // Without the SDK's totals the span is from v7's OpenTelemetry integration (@ai-sdk/otel), which
  // with `usage: true` writes only the supplemental details noCacheTokens, textTokens and
  // reasoningTokens under ai.usage.* (vercel/ai packages/otel/src supplemental-attributes.ts
  // getDetailedUsageAttributes): no cache counts. Beside its gen_ai.usage.* totals (chat,
  // invoke_agent) the GenAI reading (usage.ts) is the complete one and takes the reasoning detail
  // too; alone (the step spans) they would understate the input by the cache reads, so they are no usage.
  if (!TOTAL_KEYS.some((key) => key in a)) return undefined;
  const inputTotal = firstCount(a, INPUT_KEYS) ?? 0;
  const outputTotal = firstCount(a, OUTPUT_KEYS);
  let reasoning = firstCount(a, REASONING_KEYS);
  let cacheRead = firstCount(a, CACHE_READ_KEYS);

  const noCache = readCount(a, 'ai.usage.inputTokenDetails.noCacheTokens');
  if (noCache !== undefined) {
    const text = readCount(a, 'ai.usage.outputTokenDetails.textTokens');
    const stated = reasoning ?? 0;
    const cacheWrite = readCount(a, 'ai.usage.inputTokenDetails.cacheWriteTokens') ?? 0;
    return fromExclusive(noCache, cacheRead ?? 0, cacheWrite, outputTotal ?? (text ?? 0) + stated, stated);
  }

  const exclusive = EXCLUSIVE_INPUT_PROVIDERS.has(provider);
  let cacheWrite: number | undefined;
  if ('ai.response.providerMetadata' in a && (exclusive || cacheRead === undefined || reasoning === undefined)) {
    const meta = providerMetadataCounts(a);
    cacheRead ??= meta.cacheRead;
    cacheWrite = meta.cacheWrite;
    reasoning ??= meta.reasoning;
  }
  const build = exclusive ? fromExclusive : fromInclusive;
  return build(inputTotal, cacheRead ?? 0, exclusive ? (cacheWrite ?? 0) : 0, outputTotal ?? 0, reasoning ?? 0);
}
