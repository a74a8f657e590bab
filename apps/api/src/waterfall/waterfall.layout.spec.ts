import { SpanRow, SummaryRow, WaterfallRow, layoutWaterfall } from './waterfall.layout';
import { WaterfallSpan, WaterfallSpanType } from './waterfall.model';

function span(
  spanId: string,
  parentSpanId: string | null,
  startMs: number,
  endMs: number,
  type: WaterfallSpanType = 'TOOL',
): WaterfallSpan {
  return { spanId, parentSpanId, name: `op ${spanId}`, type, startMs, endMs, status: 'OK' };
}

const spanRows = (rows: WaterfallRow[]): SpanRow[] => rows.filter((r): r is SpanRow => r.kind === 'span');
const summaries = (rows: WaterfallRow[]): SummaryRow[] => rows.filter((r): r is SummaryRow => r.kind === 'summary');

/** The reference order, written the obvious recursive way: roots and children by start, then id. */
function treeOrder(spans: WaterfallSpan[]): Array<[id: string, depth: number]> {
  const ids = new Set(spans.map((s) => s.spanId));
  const byStart = (a: WaterfallSpan, b: WaterfallSpan): number => a.startMs - b.startMs || (a.spanId < b.spanId ? -1 : 1);
  const out: Array<[string, number]> = [];
  const visit = (s: WaterfallSpan, depth: number): void => {
    out.push([s.spanId, depth]);
    spans
      .filter((c) => c.parentSpanId === s.spanId)
      .sort(byStart)
      .forEach((c) => visit(c, depth + 1));
  };
  spans
    .filter((s) => s.parentSpanId === null || !ids.has(s.parentSpanId))
    .sort(byStart)
    .forEach((s) => visit(s, 0));
  return out;
}

/** root → agents a0..a(k-1) → `perAgent` children each, every 4th an LLM. */
function agentTrace(agents: number, perAgent: number): WaterfallSpan[] {
  const spans = [span('root', null, 0, agents * 1000, 'RUN')];
  for (let a = 0; a < agents; a++) {
    spans.push(span(`a${a}`, 'root', a * 1000, a * 1000 + 990, 'AGENT'));
    for (let i = 0; i < perAgent; i++)
      spans.push(span(`a${a}-${i}`, `a${a}`, a * 1000 + i * 0.1, a * 1000 + i * 0.1 + 5, i % 4 === 0 ? 'LLM' : 'TOOL'));
  }
  return spans;
}

describe('layoutWaterfall: order', () => {
  it('lists spans depth-first, children by start time, whatever the input order; orphans at depth 0', () => {
    const spans = [
      span('c2', 'root', 50, 60),
      span('root', null, 0, 100, 'RUN'),
      span('c1', 'root', 10, 40),
      span('g1', 'c1', 20, 30),
      span('orphan', 'gone', 5, 15),
      span('c3', 'root', 50, 55),
    ];
    const rows = spanRows(layoutWaterfall(spans, [], 100).rows);
    expect(rows.map((r): [string, number] => [r.span.spanId, r.depth])).toEqual(treeOrder(spans));
    expect(rows.find((r) => r.span.spanId === 'orphan')?.depth).toBe(0);
  });

  it('draws spans caught in a parent cycle instead of losing them', () => {
    const spans = [span('root', null, 0, 10), span('x', 'y', 1, 2), span('y', 'x', 3, 4)];
    expect(
      spanRows(layoutWaterfall(spans, [], 100).rows)
        .map((r) => r.span.spanId)
        .sort(),
    ).toEqual(['root', 'x', 'y']);
  });

  it('walks a 5,000-deep chain without overflowing the stack', () => {
    const spans = Array.from({ length: 5000 }, (_, i) => span(`s${i}`, i === 0 ? null : `s${i - 1}`, i, 10_000 - i));
    const rows = layoutWaterfall(spans, [], 10_000).rows;
    expect(spanRows(rows).map((r) => r.depth)).toEqual(spans.map((_, i) => i));
  });

  it('clamps an end before the start to a zero-length span and leaves out spans without a start', () => {
    const spans = [span('root', null, 0, 10), span('back', 'root', 5, 2), span('nan', 'root', Number.NaN, 3)];
    const layout = layoutWaterfall(spans, [], 100);
    expect(spanRows(layout.rows).map((r) => [r.span.spanId, r.span.endMs - r.span.startMs])).toEqual([
      ['root', 10],
      ['back', 0],
    ]);
    expect(layout.spanCount).toBe(2);
  });
});

describe('layoutWaterfall: collapse', () => {
  it('draws everything, with no summary, up to maxRows spans', () => {
    const spans = agentTrace(2, 9); // 21 spans
    const layout = layoutWaterfall(spans, [], spans.length);
    expect(spanRows(layout.rows)).toHaveLength(spans.length);
    expect(summaries(layout.rows)).toHaveLength(0);
    expect(layout.hiddenCount).toBe(0);
  });

  it.each([2000, 500, 37, 10])(
    'past maxRows=%p keeps rows within budget, the first rows in tree order, and every critical span',
    (maxRows) => {
      const spans = agentTrace(3, 999); // 3,001 spans
      const critical = ['root', 'a2', 'a2-998', 'a1-500'];
      const layout = layoutWaterfall(spans, [...critical, 'not-a-span'], maxRows);
      const drawn = spanRows(layout.rows);
      const drawnIds = new Set(drawn.map((r) => r.span.spanId));

      expect(layout.rows.length).toBeLessThanOrEqual(maxRows);
      for (const id of critical) expect(drawnIds.has(id)).toBe(true);
      expect(drawn.filter((r) => r.critical).map((r) => r.span.spanId)).toEqual(['root', 'a1-500', 'a2', 'a2-998']);

      // Apart from the critical spans and their ancestors, what is drawn is a prefix of the tree order.
      const kept = new Set([...critical, 'a1']);
      const order = treeOrder(spans).map(([id]) => id);
      const prefix = order.filter((id) => !kept.has(id));
      const shown = prefix.filter((id) => drawnIds.has(id));
      expect(shown).toEqual(prefix.slice(0, shown.length));

      // Each hidden span is counted once, in the summary of its nearest drawn ancestor, by type.
      const parentOf = new Map(spans.map((s) => [s.spanId, s.parentSpanId]));
      const expected = new Map<string, Map<string, number>>();
      for (const s of spans) {
        if (drawnIds.has(s.spanId)) continue;
        let anc = s.parentSpanId as string;
        while (!drawnIds.has(anc)) anc = parentOf.get(anc) as string;
        const counts = expected.get(anc) ?? new Map<string, number>();
        counts.set(s.type, (counts.get(s.type) ?? 0) + 1);
        expected.set(anc, counts);
      }
      const actual = new Map(summaries(layout.rows).map((r) => [r.parent?.spanId as string, new Map(r.byType)]));
      expect(actual).toEqual(expected);
      expect(layout.hiddenCount).toBe(spans.length - drawn.length);
    },
  );

  it('puts a summary right after the drawn part of its subtree, one level deeper than its parent', () => {
    const spans = agentTrace(2, 50);
    const rows = layoutWaterfall(spans, [], 20).rows;
    rows.forEach((row, i) => {
      if (row.kind !== 'summary' || row.parent === null) return;
      const parentIndex = rows.findIndex((r) => r.kind === 'span' && r.span === row.parent);
      const parentDepth = (rows[parentIndex] as SpanRow).depth;
      expect(row.depth).toBe(parentDepth + 1);
      expect(rows.slice(parentIndex + 1, i).every((r) => r.depth > parentDepth)).toBe(true);
      expect(rows[i + 1] === undefined || rows[i + 1].depth <= parentDepth).toBe(true);
    });
  });

  it('never hides the critical path, even when it alone is longer than maxRows', () => {
    const spans = agentTrace(1, 100);
    const critical = ['root', 'a0', 'a0-97', 'a0-98', 'a0-99'];
    const rows = layoutWaterfall(spans, critical, 3).rows;
    expect(spanRows(rows).map((r) => r.span.spanId)).toEqual(critical);
  });

  it('sums hidden top-level spans (orphans) into one summary at the end, counting errors', () => {
    const spans = Array.from({ length: 10 }, (_, i) => ({
      ...span(`o${i}`, `gone${i}`, i, i + 1),
      status: i < 3 ? ('ERROR' as const) : ('OK' as const),
    }));
    const rows = layoutWaterfall(spans, [], 4).rows;
    const last = rows[rows.length - 1] as SummaryRow;
    expect(rows).toHaveLength(4);
    expect(last).toMatchObject({ kind: 'summary', parent: null, depth: 0, hiddenCount: 7, byType: [['TOOL', 7]], errorCount: 0 });
    const fewer = layoutWaterfall(spans, [], 2).rows;
    expect(fewer[1]).toMatchObject({ kind: 'summary', hiddenCount: 9, errorCount: 2 });
  });
});
