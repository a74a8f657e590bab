import { parentsFirst } from './trace.repository';

const span = (span_id: string, parent_span_id: string, start_ns: string) => ({ span_id, parent_span_id, start_ns });

describe('parentsFirst', () => {
  it('puts a parent before the children that start in the same instant, at any depth', () => {
    // As ClickHouse sorts them (start, then span id): the agent and its LLM call sort before the root that opened them.
    const sorted = [
      span('a1', 'ff', '100'),
      span('b2', 'a1', '100'),
      span('ff', '', '100'),
      span('c3', 'ff', '200'),
      span('d4', 'c3', '200'),
    ];
    expect(parentsFirst(sorted).map((s) => s.span_id)).toEqual(['ff', 'a1', 'b2', 'c3', 'd4']);
  });

  it('keeps start order, and span id order among siblings that start together', () => {
    const sorted = [span('r', '', '1'), span('x', 'r', '2'), span('y', 'r', '2'), span('z', 'x', '3')];
    expect(parentsFirst(sorted).map((s) => s.span_id)).toEqual(['r', 'x', 'y', 'z']);
  });

  it('copes with a parent not in the trace (yet) and with a cycle', () => {
    const orphans = [span('b', 'missing', '5'), span('a', 'b', '5')];
    expect(parentsFirst(orphans).map((s) => s.span_id)).toEqual(['b', 'a']);
    const cycle = [span('p', 'q', '7'), span('q', 'p', '7')];
    expect(
      parentsFirst(cycle)
        .map((s) => s.span_id)
        .sort(),
    ).toEqual(['p', 'q']);
  });
});
