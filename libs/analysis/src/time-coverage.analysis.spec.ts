import { parallelism, unaccountedBySpan, unaccountedMs } from './time-coverage.analysis';
import { span } from './testing/span.fixture';

describe('unaccountedMs', () => {
  it('subtracts the union of overlapping children, not their sum', () => {
    const parent = span('agent', '', 0, 1000);
    const children = [span('a', 'agent', 100, 400), span('b', 'agent', 300, 600), span('c', 'agent', 700, 800)];

    // a and b overlap on 300-400: together they cover 100-600.
    expect(unaccountedMs(parent, children)).toBe(1000 - (600 - 100) - (800 - 700));
  });

  it('takes children in any order and counts a child nested in another once', () => {
    const parent = span('agent', '', 0, 1000);
    const children = [span('inner', 'agent', 200, 300), span('c', 'agent', 900, 950), span('outer', 'agent', 100, 500)];

    expect(unaccountedMs(parent, children)).toBe(1000 - (500 - 100) - (950 - 900));
  });

  it('clips children to the span and ignores those outside it', () => {
    const parent = span('agent', '', 100, 200);
    const children = [span('early', 'agent', 50, 150), span('late', 'agent', 180, 260), span('outside', 'agent', 300, 400)];

    expect(unaccountedMs(parent, children)).toBe(100 - (150 - 100) - (200 - 180));
  });

  it('is the whole duration without children, and 0 when children cover it', () => {
    expect(unaccountedMs(span('leaf', '', 10, 45), [])).toBe(35);
    expect(unaccountedMs(span('p', '', 0, 10), [span('a', 'p', 0, 6), span('b', 'p', 6, 10)])).toBe(0);
  });

  it('keeps sub-millisecond precision on real-sized timestamps', () => {
    const parent = span('p', '', 0, 1.000001);

    expect(unaccountedMs(parent, [span('a', 'p', 0, 1)])).toBeCloseTo(0.000001, 9);
  });
});

describe('unaccountedBySpan', () => {
  it('gives every span its own uncovered time, children counted against their direct parent only', () => {
    const spans = [
      span('root', '', 0, 1000),
      span('agent', 'root', 100, 900),
      span('llm', 'agent', 150, 450),
      span('tool', 'agent', 500, 600),
      span('orphan', 'gone', 0, 50),
    ];

    const unaccounted = unaccountedBySpan(spans);

    expect(Object.fromEntries(unaccounted)).toEqual({
      root: 1000 - (900 - 100),
      agent: 800 - (450 - 150) - (600 - 500),
      llm: 300,
      tool: 100,
      orphan: 50,
    });
  });
});

describe('parallelism', () => {
  it('divides the summed durations by the wall time, overall and per parent', () => {
    const spans = [
      span('root', '', 0, 100),
      span('a', 'root', 10, 60),
      span('b', 'root', 10, 60),
      span('c', 'root', 20, 90),
      span('late', 'gone', 50, 120),
    ];

    const result = parallelism(spans);

    const sum = 100 + 50 + 50 + 70 + 70;
    expect(result.sumMs).toBe(sum);
    expect(result.wallMs).toBe(120);
    expect(result.overall).toBeCloseTo(sum / 120, 12);
    expect(Object.fromEntries(result.byParent)).toEqual({ root: (50 + 50 + 70) / (90 - 10) });
  });

  it('reads 1 for a trace whose spans are all instantaneous and 0 for no spans', () => {
    expect(parallelism([span('a', '', 5, 5), span('b', 'a', 5, 5)]).overall).toBe(1);
    expect(parallelism([span('a', '', 5, 5), span('b', 'a', 5, 5)]).concurrency).toBe(1);
    expect(parallelism([]).overall).toBe(0);
    expect(parallelism([]).concurrency).toBe(0);
  });

  it('gives concurrency 1 for a strictly sequential trace however deep, where the summed durations read its depth', () => {
    const chain = [span('root', '', 0, 100), span('agent', 'root', 0, 100), span('llm', 'agent', 0, 60), span('tool', 'agent', 60, 100)];
    const result = parallelism(chain);
    expect(result.overall).toBeCloseTo((100 + 100 + 60 + 40) / 100, 12);
    expect(result.concurrency).toBeCloseTo(1, 12);
  });

  it('counts the spans doing their own work at once, on average over the wall time', () => {
    // 0–50: two tools side by side (the root waits); 50–100: the root alone. Own times 50 + 50 + 50 over 100.
    const result = parallelism([span('root', '', 0, 100), span('a', 'root', 0, 50), span('b', 'root', 0, 50)]);
    expect(result.concurrency).toBeCloseTo(1.5, 12);
    // A child outside its parent counts only its own time, once.
    const skewed = parallelism([span('root', '', 0, 100), span('a', 'root', 80, 140)]);
    expect(skewed.concurrency).toBeCloseTo((80 + 60) / 140, 12);
  });
});
