import type { AnalysisSpan } from './analysis.model';
import { loopSuspected } from './loop.analysis';
import { span } from './testing/span.fixture';
import { normaliseToolArguments, readToolArguments, wordDice, wordProfile } from './tool-arguments.normaliser';

function toolCall(spanId: string, at: number, toolArguments: string, toolName = 'search_flights'): AnalysisSpan {
  return span(spanId, 'agent', at, at + 50, { type: 'TOOL', name: `tool ${toolName}`, toolName, toolArguments });
}

const agent = span('agent', '', 0, 10_000, { type: 'AGENT' });

describe('normaliseToolArguments', () => {
  it('sorts keys at every level and collapses whitespace inside and between values', () => {
    const a = '{ "to": "ROM",\n  "from": "PAR", "filters": {"stops": 0, "cabin": "economy  class"} }';
    const b = '{"filters":{"cabin":"economy class","stops":0},"from":"PAR","to":"ROM"}';

    expect(normaliseToolArguments(a)).toBe(b);
    expect(normaliseToolArguments(b)).toBe(b);
  });

  it('compares text that is not JSON with its whitespace collapsed', () => {
    expect(normaliseToolArguments('  hotels   in\tparis ')).toBe('hotels in paris');
  });

  it('does not parse arguments over 4 KiB', () => {
    const long = `{"text": "${'x'.repeat(5000)}"}`;

    expect(normaliseToolArguments(long)).toBe(long.slice(0, 4096));
  });
});

describe('readToolArguments', () => {
  it('collects the lowercased words of the values, not the keys, in sorted-key order', () => {
    expect(readToolArguments('{"order_id": "A-10023", "express": true, "items": [{"sku": "Red Mug", "qty": 2}]}').words).toEqual([
      'true',
      '2',
      'red',
      'mug',
      'a',
      '10023',
    ]);
    expect(readToolArguments('Hotels in  PARIS').words).toEqual(['hotels', 'in', 'paris']);
  });
});

describe('wordDice', () => {
  const dictionary = new Map<string, number>();
  const profile = (text: string): number[] => wordProfile(readToolArguments(text).words, dictionary);
  const query = (text: string): string => JSON.stringify({ query: text });
  const longQuery = 'cheap direct flights from paris to rome for two adults in may please';

  it('is 1 for the same words in another case, and stays at or over 0.9 with one word in ten dropped', () => {
    const words = longQuery.split(' ').length;

    expect(wordDice(profile(query(longQuery)), profile(query(longQuery.toUpperCase())))).toBe(1);
    expect(wordDice(profile(query(longQuery)), profile(query(longQuery.replace(' please', ''))))).toBeCloseTo(
      (2 * (words - 1)) / (2 * words - 1),
      12,
    );
  });

  it('tells apart short calls that differ in an id', () => {
    expect(wordDice(profile('{"order_id":"A-10023"}'), profile('{"order_id":"A-10024"}'))).toBe((2 * 1) / (2 + 2));
  });
});

describe('loopSuspected', () => {
  it('suspects three calls of one tool whose arguments differ only in key order and spacing', () => {
    const calls = [
      toolCall('call-1', 100, '{"from":"PAR","to":"ROM"}'),
      toolCall('call-2', 300, '{ "to": "ROM", "from": "PAR" }'),
      toolCall('call-3', 500, '{"to":"ROM",\n"from":"PAR"}'),
    ];

    expect(loopSuspected([agent, ...calls])).toEqual({
      suspected: true,
      reasons: [
        { kind: 'REPEATED_TOOL_CALL', toolName: 'search_flights', calls: 3, identical: true, spanIds: ['call-1', 'call-2', 'call-3'] },
      ],
    });
  });

  it('suspects near-identical calls and says they were not identical', () => {
    const calls = [
      toolCall('call-1', 100, '{"query":"cheap direct flights from paris to rome for two adults in may please"}'),
      toolCall('call-2', 300, '{"query":"Cheap direct flights from Paris to Rome for two adults in May"}'),
      toolCall('call-3', 500, '{"query":"cheap direct flights from paris to rome for 2 adults in may please"}'),
    ];

    const result = loopSuspected([agent, ...calls]);

    expect(result.suspected).toBe(true);
    expect(result.reasons).toEqual([expect.objectContaining({ calls: 3, identical: false, spanIds: ['call-1', 'call-2', 'call-3'] })]);
  });

  it('does not suspect three calls with different arguments, however alike their text', () => {
    const routes = [
      toolCall('call-1', 100, '{"from":"PAR","to":"ROM"}'),
      toolCall('call-2', 300, '{"from":"ROM","to":"NCE"}'),
      toolCall('call-3', 500, '{"from":"NCE","to":"PAR"}'),
    ];
    const orders = ['A-10023', 'A-10024', 'A-10025'].map((id, at) =>
      toolCall(`order-${at}`, 600 + at * 100, JSON.stringify({ order_id: id }), 'get_order'),
    );

    expect(loopSuspected([agent, ...routes, ...orders])).toEqual({ suspected: false, reasons: [] });
  });

  it('keeps tools apart, falls back to the span name, and skips calls without captured arguments', () => {
    const spans = [
      agent,
      toolCall('a-1', 100, '{"q":1}', 'lookup'),
      toolCall('b-1', 200, '{"q":1}', 'fetch'),
      toolCall('a-2', 300, '{"q":1}', 'lookup'),
      span('named-1', 'agent', 400, 410, { type: 'TOOL', name: 'calculator', toolArguments: '{"x":2}' }),
      span('named-2', 'agent', 420, 430, { type: 'TOOL', name: 'calculator', toolArguments: '{"x":2}' }),
      span('named-3', 'agent', 440, 450, { type: 'TOOL', name: 'calculator', toolArguments: '{"x":2}' }),
      toolCall('blank-1', 500, ''),
      toolCall('blank-2', 600, ''),
      toolCall('blank-3', 700, ''),
    ];

    expect(loopSuspected(spans).reasons).toEqual([
      expect.objectContaining({ toolName: 'calculator', spanIds: ['named-1', 'named-2', 'named-3'] }),
    ]);
  });

  describe('iterations far over the project median', () => {
    const root = span('root', '', 0, 100, { type: 'RUN' });
    const median = 2;
    const factor = 3;
    const margin = 5;
    // Flags at ≥ 3 × median and ≥ median + 5: for a median of 2 that is 7.
    const threshold = Math.max(factor * median, median + margin);

    it('suspects a trace at the threshold and names the root', () => {
      expect(loopSuspected([root], { iterations: threshold, projectMedianIterations: median })).toEqual({
        suspected: true,
        reasons: [{ kind: 'ITERATIONS', iterations: threshold, projectMedianIterations: median, spanIds: ['root'] }],
      });
    });

    it('does not suspect one iteration below it, or without a median', () => {
      expect(loopSuspected([root], { iterations: threshold - 1, projectMedianIterations: median }).suspected).toBe(false);
      expect(loopSuspected([root], { iterations: 100 }).suspected).toBe(false);
      expect(loopSuspected([root], { iterations: 100, projectMedianIterations: 0 }).suspected).toBe(false);
    });

    it('needs the factor as well as the margin for a large median', () => {
      const largeMedian = 10;

      expect(loopSuspected([root], { iterations: factor * largeMedian - 1, projectMedianIterations: largeMedian }).suspected).toBe(false);
      expect(loopSuspected([root], { iterations: factor * largeMedian, projectMedianIterations: largeMedian }).suspected).toBe(true);
    });
  });

  it('honours a custom call threshold', () => {
    const calls = [toolCall('call-1', 100, '{"a":1}'), toolCall('call-2', 300, '{"a":1}')];

    expect(loopSuspected([agent, ...calls]).suspected).toBe(false);
    expect(loopSuspected([agent, ...calls], { thresholds: { loopMinCalls: 2 } }).suspected).toBe(true);
  });
});
