import type { UsageBuckets } from '@spanforge/semconv';
import type { TokenPrices } from './price.model';
import { PriceTable } from './price-table';
import { PRICE_TABLE_VERSION } from './prices.data';
import { costOf, priceSpan } from './span-cost';

const table = PriceTable.bundled();
const NOW = new Date(`${PRICE_TABLE_VERSION.slice(0, 10)}T12:00:00Z`);
const usage: UsageBuckets = { inputUncached: 12_345, cacheRead: 40_000, cacheWrite: 3_210, output: 987, reasoning: 2_048 };

/** The public cost formula (each token bucket × its price) written out plainly, per 1M tokens. */
function expectedCost(u: UsageBuckets, p: TokenPrices): number {
  return (
    (u.inputUncached * p.inputPerMTok +
      u.cacheRead * p.cacheReadPerMTok +
      u.cacheWrite * p.cacheWritePerMTok +
      (u.output + u.reasoning) * p.outputPerMTok) /
    1e6
  );
}

describe('costOf', () => {
  it.each([
    ['claude-sonnet-4-5', 'anthropic'],
    ['gpt-4o', 'openai'],
    ['o4-mini', 'openai'],
    ['gemini-2.5-pro', 'google_gemini'],
    ['gemini-2.0-flash-lite', 'google_gemini'],
    ['deepseek-reasoner', 'deepseek'],
    ['llama-3.3-70b', 'aws_bedrock'],
  ])('%s: tokens of each bucket times the quote price for it', (model, provider) => {
    const quote = table.lookup(model, provider, NOW);
    if (!quote) throw new Error(`${model} is not in the table`);
    expect(costOf(usage, quote)).toBeCloseTo(expectedCost(usage, quote), 12);
  });

  it('bills reasoning tokens at the output price', () => {
    const quote = table.lookup('o3', 'openai', NOW)!;
    const reasoningOnly = { inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 1_000 };
    expect(costOf(reasoningOnly, quote)).toBeCloseTo((1_000 * quote.outputPerMTok) / 1e6, 15);
  });

  it('bills cache buckets at the input price when the model has no cache price', () => {
    const quote = table.lookup('gemini-2.0-flash-lite', 'google_gemini', NOW)!;
    const cacheOnly = { inputUncached: 0, cacheRead: 5_000, cacheWrite: 7_000, output: 0, reasoning: 0 };
    expect(costOf(cacheOnly, quote)).toBeCloseTo((12_000 * quote.inputPerMTok) / 1e6, 15);
  });

  it('does not drift: whole-token integer arithmetic, rounded once', () => {
    const prices: TokenPrices = { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 };
    const tokens = { inputUncached: 12_345, cacheRead: 40_000, cacheWrite: 0, output: 0, reasoning: 0 };
    // Per-token float prices drift: this sums to 0.049034999999999995.
    const perToken = tokens.inputUncached * (prices.inputPerMTok / 1e6) + tokens.cacheRead * (prices.cacheReadPerMTok / 1e6);
    // The same in integer cents per 1M tokens, divided once.
    const exact = (tokens.inputUncached * 300 + tokens.cacheRead * 30) / 1e8;
    expect(perToken).not.toBe(exact);
    expect(costOf(tokens, prices)).toBe(exact);
    const one = { inputUncached: 1, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
    expect(costOf(one, { ...prices, inputPerMTok: 0.003625 })).toBe(3625 / 1e12);
  });

  it('never returns a negative or NaN cost for broken token counts', () => {
    const quote = table.lookup('gpt-4o', 'openai', NOW)!;
    const broken = { inputUncached: -5, cacheRead: Number.NaN, cacheWrite: Number.POSITIVE_INFINITY, output: 10, reasoning: 0 };
    expect(costOf(broken, quote)).toBeCloseTo((10 * quote.outputPerMTok) / 1e6, 15);
  });

  it('costs nothing for no tokens', () => {
    expect(costOf({ inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 }, table.lookup('gpt-4o', 'openai', NOW)!)).toBe(
      0,
    );
  });
});

describe('priceSpan', () => {
  const span = { pricingModel: 'claude-3-5-haiku-20241022', provider: 'anthropic', usage, explicitCostUsd: undefined, startTime: NOW };

  it('prices from the table at the span start, with the table version', () => {
    const quote = table.lookup(span.pricingModel, span.provider, span.startTime)!;
    expect(priceSpan(span, table)).toEqual({
      costUsd: costOf(usage, quote),
      costSource: 'price_table',
      priceVersion: `bundled:${PRICE_TABLE_VERSION}`,
    });
  });

  it('uses the price in force at the span start, not today', () => {
    const early = { ...span, startTime: new Date('2024-11-20T00:00:00Z') };
    const quoteThen = table.lookup(span.pricingModel, span.provider, early.startTime)!;
    expect(priceSpan(early, table).costUsd).toBe(costOf(usage, quoteThen));
    expect(priceSpan(early, table).costUsd).toBeGreaterThan(priceSpan(span, table).costUsd);
  });

  it('lets an explicit cost win, even 0, over table and override', () => {
    const project = table.withOverrides([{ id: 'cheap', model: 'claude-3-5-haiku', inputPerMTok: 0.01, outputPerMTok: 0.02 }]);
    expect(priceSpan({ ...span, explicitCostUsd: 0.0421 }, project)).toEqual({ costUsd: 0.0421, costSource: 'explicit', priceVersion: '' });
    expect(priceSpan({ ...span, explicitCostUsd: 0 }, table)).toEqual({ costUsd: 0, costSource: 'explicit', priceVersion: '' });
  });

  it('ignores a negative or non-finite explicit cost', () => {
    expect(priceSpan({ ...span, explicitCostUsd: -1 }, table).costSource).toBe('price_table');
    expect(priceSpan({ ...span, explicitCostUsd: Number.NaN }, table).costSource).toBe('price_table');
  });

  it('reports an override as the source and version', () => {
    const override = {
      id: 'negotiated',
      model: 'claude-3-5-haiku',
      inputPerMTok: 0.5,
      outputPerMTok: 2.5,
      cacheReadPerMTok: 0.05,
      cacheWritePerMTok: 0.625,
    };
    const result = priceSpan(span, table.withOverrides([override]));
    expect(result).toEqual({ costUsd: costOf(usage, override), costSource: 'override', priceVersion: 'override:negotiated' });
  });

  it('marks an unknown model as unpriced: cost 0, source none', () => {
    expect(priceSpan({ ...span, pricingModel: 'acme-internal-llm' }, table)).toEqual({ costUsd: 0, costSource: 'none', priceVersion: '' });
  });
});
