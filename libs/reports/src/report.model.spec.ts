import { computeChange, emptyTotals } from './report.model';

describe('computeChange', () => {
  it('is (current − previous) / previous per metric, null where previous is 0', () => {
    const previous = { costUsd: 80, inputTokens: 1000, outputTokens: 0, traceCount: 40, spanCount: 7 };
    const current = { costUsd: 100, inputTokens: 750, outputTokens: 20, traceCount: 40, spanCount: 9 };

    expect(computeChange(current, previous)).toEqual({
      costUsd: (100 - 80) / 80,
      inputTokens: (750 - 1000) / 1000,
      outputTokens: null,
      traceCount: 0,
    });
  });

  it('has no ratios against an empty previous window', () => {
    expect(computeChange(emptyTotals(), emptyTotals())).toEqual({ costUsd: null, inputTokens: null, outputTokens: null, traceCount: null });
  });
});
