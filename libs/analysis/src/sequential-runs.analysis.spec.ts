import type { AnalysisSpan } from './analysis.model';
import { repeatedSiblings } from './sequential-runs.analysis';
import { shuffled, span } from './testing/span.fixture';

const handler = span('handler', '', 0, 10_000, { type: 'HTTP' });

/** `count` DB calls named `name`, each `length` ms long and starting `step` ms after the previous one. */
function dbCalls(count: number, firstStart: number, length: number, step: number, name = 'SELECT orders'): AnalysisSpan[] {
  return Array.from({ length: count }, (_, at) =>
    span(`db-${firstStart}-${at}`, 'handler', firstStart + at * step, firstStart + at * step + length, { type: 'DB', name }),
  );
}

describe('repeatedSiblings', () => {
  it('finds six sequential identical DB calls', () => {
    const calls = dbCalls(6, 100, 40, 50);

    const runs = repeatedSiblings(shuffled([handler, ...calls], 4));

    expect(runs).toEqual([
      { parentSpanId: 'handler', name: 'SELECT orders', type: 'DB', count: 6, spanIds: calls.map((call) => call.spanId), totalMs: 6 * 40 },
    ]);
  });

  it('ignores six identical DB calls that ran in parallel', () => {
    expect(repeatedSiblings([handler, ...dbCalls(6, 100, 40, 5)])).toEqual([]);
  });

  it('counts back-to-back calls (each starting as the previous ends) as sequential', () => {
    expect(repeatedSiblings([handler, ...dbCalls(5, 100, 40, 40)])).toHaveLength(1);
  });

  it('needs five in a row: four are not reported, and another sibling in between breaks the run', () => {
    const interrupted = [
      ...dbCalls(3, 100, 10, 20),
      span('cache', 'handler', 165, 168, { type: 'DB', name: 'GET cache' }),
      ...dbCalls(3, 170, 10, 20),
    ];

    expect(repeatedSiblings([handler, ...dbCalls(4, 100, 10, 20)])).toEqual([]);
    expect(repeatedSiblings([handler, ...interrupted])).toEqual([]);
  });

  it('requires the same type as well as the same name', () => {
    const calls = dbCalls(5, 100, 10, 20).map((call, at) => (at === 2 ? { ...call, type: 'HTTP' } : call));

    expect(repeatedSiblings([handler, ...calls])).toEqual([]);
  });

  it('starts a new run after an overlap and reports each long enough run in time order', () => {
    const first = dbCalls(5, 100, 10, 20);
    // The sixth call overlaps the fifth, so it opens a second run with the five after it.
    const second = dbCalls(6, 185, 10, 20);

    const runs = repeatedSiblings([handler, ...second, ...first]);

    expect(runs.map((run) => run.spanIds)).toEqual([first.map((call) => call.spanId), second.map((call) => call.spanId)]);
  });

  it('honours a custom minimum', () => {
    expect(repeatedSiblings([handler, ...dbCalls(3, 100, 10, 20)], { thresholds: { repeatedSiblingsMin: 3 } })).toHaveLength(1);
  });
});
