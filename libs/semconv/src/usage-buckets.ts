import type { UsageBuckets } from './semconv.model';

/** Usage read from one span; found is false when the span states no token count at all. */
export interface UsageReading {
  usage: UsageBuckets;
  found: boolean;
}

/**
 * From a convention whose input total includes cache reads and writes and whose output total
 * includes reasoning (OTel GenAI, OpenInference, OpenAI-shaped usage).
 *
 * An inclusive total is never smaller than its own parts. When it is, the emitter evidently sent
 * the uncached count (Anthropic-style) or reasoning beside the output (Gemini-style thoughts), and
 * the count is taken as the uncached/non-reasoning bucket instead of being floored to zero, which
 * would silently drop billed tokens.
 */
export function fromInclusive(
  inputTotal: number,
  cacheRead: number,
  cacheWrite: number,
  outputTotal: number,
  reasoning: number,
): UsageReading {
  const cached = cacheRead + cacheWrite;
  return {
    usage: {
      inputUncached: inputTotal >= cached ? inputTotal - cached : inputTotal,
      cacheRead,
      cacheWrite,
      output: outputTotal >= reasoning ? outputTotal - reasoning : outputTotal,
      reasoning,
    },
    found: true,
  };
}

/** From a convention that reports uncached input beside the cache counts (Anthropic's own usage shape). Output stays inclusive of reasoning. */
export function fromExclusive(
  inputUncached: number,
  cacheRead: number,
  cacheWrite: number,
  outputTotal: number,
  reasoning: number,
): UsageReading {
  return {
    usage: { inputUncached, cacheRead, cacheWrite, output: outputTotal >= reasoning ? outputTotal - reasoning : outputTotal, reasoning },
    found: true,
  };
}
