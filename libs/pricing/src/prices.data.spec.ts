import { modelKey } from './model-key';
import { PriceTable } from './price-table';
import { utcDayMs } from './price-override.validation';
import { BUNDLED_PRICES, PRICE_TABLE_VERSION } from './prices.data';

/*
 * Sanity checks over the whole bundled table: they catch the typos a price update is likely to
 * bring (a swapped input/output, a missing zero, a duplicated row, a date that does not parse).
 */
const rows = BUNDLED_PRICES.map((row) => ({ ...row, label: `${row.model} (${row.provider}) from ${row.effectiveFrom}` }));
const chat = rows.filter((r) => (r.kind ?? 'chat') === 'chat');
const prices = rows.flatMap((r) =>
  (['inputPerMTok', 'outputPerMTok', 'cacheReadPerMTok', 'cacheWritePerMTok'] as const)
    .filter((f) => r[f] !== undefined)
    .map((f) => [r.label, f, r[f] as number] as const),
);

describe('bundled price table', () => {
  it('has a version that is a day (with .N for a later change that day), and no row after that day', () => {
    expect(PRICE_TABLE_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}(\.\d+)?$/);
    const day = PRICE_TABLE_VERSION.slice(0, 10);
    expect(utcDayMs(day)).not.toBeNaN();
    expect(rows.filter((r) => r.effectiveFrom > day).map((r) => r.label)).toEqual([]);
  });

  it('has effectiveFrom dates that are real days', () => {
    expect(rows.filter((r) => Number.isNaN(utcDayMs(r.effectiveFrom))).map((r) => r.label)).toEqual([]);
  });

  it.each(prices)('%s: %s is a finite, non-negative amount of whole micro-dollars per 1M tokens', (_label, _field, price) => {
    expect(Number.isFinite(price)).toBe(true);
    expect(price).toBeGreaterThanOrEqual(0);
    // costOf is exact in micro-dollars per 1M tokens (see span-cost.ts).
    expect(Math.abs(price * 1e6 - Math.round(price * 1e6))).toBeLessThan(1e-6);
  });

  it('has no duplicate (model, provider, effectiveFrom)', () => {
    const seen = new Map<string, number>();
    for (const r of rows)
      seen.set(
        `${modelKey(r.model)}|${r.provider}|${r.effectiveFrom}`,
        (seen.get(`${modelKey(r.model)}|${r.provider}|${r.effectiveFrom}`) ?? 0) + 1,
      );
    expect([...seen].filter(([, n]) => n > 1).map(([k]) => k)).toEqual([]);
  });

  it('charges chat output at least the input price (no exceptions today) and prices no embedding output', () => {
    expect(chat.filter((r) => r.outputPerMTok < r.inputPerMTok).map((r) => r.label)).toEqual([]);
    expect(rows.filter((r) => r.kind === 'embedding' && r.outputPerMTok !== 0).map((r) => r.label)).toEqual([]);
  });

  it('makes cache reads no dearer and cache writes no cheaper than input', () => {
    expect(rows.filter((r) => r.cacheReadPerMTok !== undefined && r.cacheReadPerMTok > r.inputPerMTok).map((r) => r.label)).toEqual([]);
    expect(rows.filter((r) => r.cacheWritePerMTok !== undefined && r.cacheWritePerMTok < r.inputPerMTok).map((r) => r.label)).toEqual([]);
  });

  it('prices Anthropic caches at 1.25x input to write and 0.1x to read, except Claude 3 Haiku as published', () => {
    const anthropic = rows.filter((r) => r.provider === 'anthropic' && r.model !== 'claude-3-haiku');
    expect(anthropic.length).toBeGreaterThan(10);
    for (const r of anthropic) {
      expect([r.label, r.cacheWritePerMTok]).toEqual([r.label, expect.closeTo(r.inputPerMTok * 1.25, 9)]);
      expect([r.label, r.cacheReadPerMTok]).toEqual([r.label, expect.closeTo(r.inputPerMTok * 0.1, 9)]);
    }
  });

  it('resolves every model and alias exactly to its own model (no alias names two models)', () => {
    const table = PriceTable.bundled();
    const at = new Date(`${PRICE_TABLE_VERSION}T00:00:00Z`);
    for (const r of rows) {
      for (const name of [r.model, ...(r.aliases ?? [])]) {
        expect([name, table.lookup(name, r.provider, at)?.model, table.lookup(name, r.provider, at)?.match]).toEqual([
          name,
          r.model,
          'exact',
        ]);
      }
    }
  });

  it('covers the major provider families', () => {
    const providers = new Set(rows.map((r) => r.provider));
    for (const p of ['openai', 'anthropic', 'google_gemini', 'mistral', 'aws_bedrock', 'deepseek', 'xai']) expect(providers).toContain(p);
  });
});
