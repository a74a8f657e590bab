import type { AnalysisSpan, CriticalPathStep } from './analysis.model';
import { criticalPath } from './critical-path.analysis';
import { shuffled, span } from './testing/span.fixture';

/** [spanId, selfMs] of each step, root first: what a reader of the path checks. */
function selfTimes(path: CriticalPathStep[]): [string, number][] {
  return path.map((step) => [step.spanId, step.selfMs]);
}

describe('criticalPath', () => {
  it('goes through the slowest of parallel tools, then the LLM call that followed them', () => {
    const root = { start: 0, end: 1000 };
    const tools = { fast: { start: 100, end: 300 }, slow: { start: 100, end: 500 }, medium: { start: 100, end: 400 } };
    const llm = { start: 550, end: 950 };
    const spans = [
      span('root', '', root.start, root.end, { type: 'RUN' }),
      span('fast', 'root', tools.fast.start, tools.fast.end, { type: 'TOOL' }),
      span('slow', 'root', tools.slow.start, tools.slow.end, { type: 'TOOL' }),
      span('medium', 'root', tools.medium.start, tools.medium.end, { type: 'TOOL' }),
      span('llm', 'root', llm.start, llm.end, { type: 'LLM' }),
    ];

    const path = criticalPath(spans);

    const rootSelf = root.end - llm.end + (llm.start - tools.slow.end) + (tools.slow.start - root.start);
    expect(selfTimes(path)).toEqual([
      ['root', rootSelf],
      ['slow', tools.slow.end - tools.slow.start],
      ['llm', llm.end - llm.start],
    ]);
    expect(path[1]).toMatchObject({
      name: 'slow',
      type: 'TOOL',
      startMs: tools.slow.start,
      endMs: tools.slow.end,
      durationMs: tools.slow.end - tools.slow.start,
    });
  });

  it('walks nested agent iterations root first, in time order', () => {
    const t = {
      root: [0, 1000],
      agent1: [10, 400],
      llm1: [20, 150],
      tool1: [160, 390],
      agent2: [420, 990],
      llm2: [430, 600],
      retrieval: [605, 700],
      seatMap: [610, 800],
      hotels: [610, 950],
    } as const;
    const parents: Record<keyof typeof t, string> = {
      root: '',
      agent1: 'root',
      llm1: 'agent1',
      tool1: 'agent1',
      agent2: 'root',
      llm2: 'agent2',
      retrieval: 'agent2',
      seatMap: 'agent2',
      hotels: 'agent2',
    };
    const spans = Object.entries(t).map(([id, [start, end]]) => span(id, parents[id as keyof typeof t], start, end));

    const path = criticalPath(shuffled(spans, 3));

    const length = (id: keyof typeof t): number => t[id][1] - t[id][0];
    expect(selfTimes(path)).toEqual([
      ['root', t.root[1] - t.agent2[1] + (t.agent2[0] - t.agent1[1]) + (t.agent1[0] - t.root[0])],
      ['agent1', t.agent1[1] - t.tool1[1] + (t.tool1[0] - t.llm1[1]) + (t.llm1[0] - t.agent1[0])],
      ['llm1', length('llm1')],
      ['tool1', length('tool1')],
      // hotels ended last; seatMap and the retrieval ran beside it, so only llm2 precedes it on the path.
      ['agent2', t.agent2[1] - t.hotels[1] + (t.hotels[0] - t.llm2[1]) + (t.llm2[0] - t.agent2[0])],
      ['llm2', length('llm2')],
      ['hotels', length('hotels')],
    ]);
    expect(path.reduce((sum, step) => sum + step.selfMs, 0)).toBe(length('root'));
  });

  it('leaves an overlapping sibling that ended earlier off the path', () => {
    const spans = [span('root', '', 0, 100), span('early', 'root', 10, 60), span('late', 'root', 40, 90)];

    expect(selfTimes(criticalPath(spans))).toEqual([
      ['root', 100 - 90 + (40 - 0)],
      ['late', 90 - 40],
    ]);
  });

  it('keeps back-to-back children (one ends as the next starts) on the path', () => {
    const spans = [span('root', '', 0, 30), span('a', 'root', 0, 10), span('b', 'root', 10, 20), span('c', 'root', 20, 30)];

    expect(selfTimes(criticalPath(spans))).toEqual([
      ['root', 0],
      ['a', 10],
      ['b', 10],
      ['c', 10],
    ]);
  });

  it('clips a child that outlives its parent and skips children outside it or of zero length', () => {
    const spans = [
      span('root', '', 0, 100),
      span('spills', 'root', 50, 130),
      span('after', 'root', 120, 140),
      span('instant', 'root', 20, 20),
      span('before', 'root', 5, 15),
    ];

    const path = criticalPath(spans);

    expect(selfTimes(path)).toEqual([
      ['root', 50 - 15 + (5 - 0)],
      ['before', 10],
      ['spills', 100 - 50],
    ]);
    expect(path[2]).toMatchObject({ endMs: 130, durationMs: 80 });
  });

  it('takes the earlier-starting child when two end together', () => {
    const spans = [span('root', '', 0, 100), span('short', 'root', 60, 90), span('long', 'root', 20, 90)];

    expect(criticalPath(spans).map((step) => step.spanId)).toEqual(['root', 'long']);
  });

  describe('several roots', () => {
    const root = span('root', '', 0, 100);
    const child = span('child', 'root', 10, 90);

    it('stays on the root when an orphan (absent parent) ends earlier', () => {
      const orphan = span('orphan', 'never-arrived', 20, 95);

      expect(criticalPath([orphan, child, root]).map((step) => step.spanId)).toEqual(['root', 'child']);
    });

    it('goes through an orphan that ends after the root, with its own children', () => {
      const orphan = span('orphan', 'never-arrived', 50, 150);
      const orphanChild = span('orphan-child', 'orphan', 60, 140);

      expect(selfTimes(criticalPath([root, child, orphan, orphanChild]))).toEqual([
        ['orphan', 150 - 140 + (60 - 50)],
        ['orphan-child', 80],
      ]);
    });

    it('prefers the true root over an orphan ending at the same time', () => {
      const orphan = span('orphan', 'never-arrived', 0, 100);

      expect(criticalPath([orphan, root])[0].spanId).toBe('root');
    });

    it('treats a self-parented span as a root without walking into itself', () => {
      const selfParented = span('loop', 'loop', 0, 200);

      expect(selfTimes(criticalPath([root, selfParented]))).toEqual([['loop', 200]]);
    });
  });

  it('gives the same path whatever order the spans arrive in', () => {
    const spans: AnalysisSpan[] = [span('root', '', 0, 100)];
    for (let at = 0; at < 40; at++) spans.push(span(`c${at}`, 'root', at * 2, at * 2 + 5 + (at % 7)));

    const expected = criticalPath(spans);

    for (const seed of [1, 2, 3]) expect(criticalPath(shuffled(spans, seed))).toEqual(expected);
  });

  it('returns nothing for an empty trace', () => {
    expect(criticalPath([])).toEqual([]);
  });

  it('walks a 10,000-deep chain without overflowing the stack', () => {
    const depth = 10_000;
    const spans = Array.from({ length: depth }, (_, level) =>
      span(`n${level}`, level === 0 ? '' : `n${level - 1}`, level, 2 * depth - level),
    );

    const path = criticalPath(spans);

    expect(path).toHaveLength(depth);
    expect(path[0].selfMs).toBe(2);
    expect(path[depth - 1].selfMs).toBe(2);
  });
});
