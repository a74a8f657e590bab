import type { UsageBuckets } from '@spanforge/semconv';
import type { CostSource, TokenPrices } from './price.model';
import type { Instant, PriceTable } from './price-table';

/*
 * Float drift: 0.1 + 0.2 !== 0.3, and trace and session costs are sums of many span costs. So a
 * span's cost is computed exactly in integers and rounded once: prices become integer micro-dollars
 * per 1M tokens (every list price has at most 6 decimals; finer override prices round to the nearest
 * $0.000001/MTok, i.e. $1e-12 per token), tokens times those are exact integers, and the single
 * division by 1e12 gives the double nearest to the true cost. Exact while the sum stays below 2^53,
 * i.e. a span costing under ~$9,000; above that the relative error is still below 2^-53.
 */
const MICRO = 1_000_000;
const MICRO_PER_MTOK_TO_USD = 1e12;

function microPerMTok(usdPerMTok: number): number {
  return Math.round(usdPerMTok * MICRO);
}

/** A cost must never be negative or NaN (it would poison every sum it joins): bad counts count as 0. */
function tokens(count: number): number {
  return Number.isFinite(count) && count > 0 ? count : 0;
}

/**
 * USD for the usage at those prices. The buckets are exclusive, so each token is billed once:
 * uncached input at the input price, cache reads and writes at theirs, output and reasoning tokens
 * at the output price.
 */
export function costOf(usage: UsageBuckets, price: TokenPrices): number {
  const total =
    tokens(usage.inputUncached) * microPerMTok(price.inputPerMTok) +
    tokens(usage.cacheRead) * microPerMTok(price.cacheReadPerMTok) +
    tokens(usage.cacheWrite) * microPerMTok(price.cacheWritePerMTok) +
    (tokens(usage.output) + tokens(usage.reasoning)) * microPerMTok(price.outputPerMTok);
  return total / MICRO_PER_MTOK_TO_USD;
}

export interface SpanPricingInput {
  /** NormalizedSpan.pricingModel. */
  pricingModel: string;
  /** NormalizedSpan.provider. */
  provider: string;
  usage: UsageBuckets;
  /** NormalizedSpan.explicitCostUsd: a cost the span states itself. */
  explicitCostUsd: number | undefined;
  /** Prices in force at the span's start apply; bigint is OTLP's Unix nanoseconds. */
  startTime: Instant;
}

export interface SpanCost {
  costUsd: number;
  costSource: CostSource;
  /** The price table version or override used ('bundled:2026-11-30', 'override:<id>'); '' when none was. */
  priceVersion: string;
}

/**
 * The cost of one LLM span. A cost the span states wins over the price table, including an explicit
 * 0; a negative or non-finite one is treated as absent. A model the table does not know costs 0 with source
 * 'none', so the UI can flag unpriced models instead of showing them as free.
 */
export function priceSpan(span: SpanPricingInput, table: PriceTable): SpanCost {
  const explicit = span.explicitCostUsd;
  if (explicit !== undefined && Number.isFinite(explicit) && explicit >= 0) {
    return { costUsd: explicit, costSource: 'explicit', priceVersion: '' };
  }
  const quote = table.lookup(span.pricingModel, span.provider, span.startTime);
  if (!quote) return { costUsd: 0, costSource: 'none', priceVersion: '' };
  return { costUsd: costOf(span.usage, quote), costSource: quote.source, priceVersion: quote.version };
}
