import type { AnalysisSpan, Finding, FindingKind } from './analysis.model';
import { DEFAULT_THRESHOLDS } from './analysis.options';
import { formatMs, formatShare } from './finding.format';
import { findings } from './trace.findings';
import { span } from './testing/span.fixture';

function ofKind(found: Finding[], kind: FindingKind): Finding[] {
  return found.filter((finding) => finding.kind === kind);
}

/** Sequential siblings of `parent`: each [name, type, length] starts `gap` ms after the previous ends. */
function sequence(parent: string, start: number, gap: number, calls: [string, string, number][]): AnalysisSpan[] {
  let at = start;
  return calls.map(([name, type, length], position) => {
    const call = span(`${parent}-${position}`, parent, at, at + length, { name, type });
    at += length + gap;
    return call;
  });
}

describe('findings', () => {
  describe('CRITICAL_PATH_DOMINATED_BY', () => {
    it('names the span type owning more than 60% of the path, with its share and time', () => {
      const root = { start: 0, end: 1000 };
      const llm = { start: 0, end: 700 };
      const spans = [
        span('root', '', root.start, root.end, { type: 'RUN' }),
        span('llm', 'root', llm.start, llm.end, { type: 'LLM', name: 'chat gpt-4o' }),
        span('tool', 'root', 750, 900, { type: 'TOOL' }),
      ];

      const [finding] = ofKind(findings(spans), 'CRITICAL_PATH_DOMINATED_BY');

      const llmMs = llm.end - llm.start;
      const pathMs = root.end - root.start;
      expect(finding.spanIds).toEqual(['llm']);
      expect(finding.message).toBe(
        `LLM spans make ${formatShare(llmMs / pathMs)} of the critical path (${formatMs(llmMs)} of ${formatMs(pathMs)}, 1 span); the longest is "chat gpt-4o" with ${formatMs(llmMs)}.`,
      );
    });

    it('stays quiet at 60% or below, and for container spans’ own time', () => {
      const balanced = [
        span('root', '', 0, 1000, { type: 'RUN' }),
        span('llm', 'root', 0, 600, { type: 'LLM' }),
        span('tool', 'root', 600, 1000, { type: 'TOOL' }),
      ];
      const empty = [span('root', '', 0, 1000, { type: 'RUN' }), span('agent', 'root', 0, 1000, { type: 'AGENT' })];

      expect(ofKind(findings(balanced), 'CRITICAL_PATH_DOMINATED_BY')).toEqual([]);
      expect(ofKind(findings(empty), 'CRITICAL_PATH_DOMINATED_BY')).toEqual([]);
    });
  });

  describe('UNACCOUNTED_TIME', () => {
    it('reports a parent whose uncovered time passes both 30% of the trace and 100 ms', () => {
      const agent = { start: 0, end: 900 };
      const llm = { start: 0, end: 100 };
      const spans = [
        span('root', '', 0, 1000, { type: 'RUN' }),
        span('agent', 'root', agent.start, agent.end, { type: 'AGENT', name: 'plan' }),
        span('llm', 'agent', llm.start, llm.end, { type: 'LLM' }),
      ];

      const found = ofKind(findings(spans), 'UNACCOUNTED_TIME');

      const uncovered = agent.end - agent.start - (llm.end - llm.start);
      expect(found).toEqual([
        {
          kind: 'UNACCOUNTED_TIME',
          message: `"plan" (AGENT) spent ${formatMs(uncovered)} of its ${formatMs(agent.end - agent.start)} outside any child span, ${formatShare(uncovered / 1000)} of the trace's ${formatMs(1000)}: uninstrumented work or waiting.`,
          spanIds: ['agent'],
        },
      ]);
    });

    it('needs both thresholds, and never reports a leaf', () => {
      const minMs = DEFAULT_THRESHOLDS.unaccountedMinMs;
      const justOver = [span('root', '', 0, minMs + 20), span('child', 'root', 0, 10)];
      const underMinimum = [span('root', '', 0, minMs), span('child', 'root', 0, 10)];
      const underShare = [span('root', '', 0, 10_000), span('child', 'root', 0, 8000)];
      const leaf = [span('root', '', 0, 10_000)];

      expect(ofKind(findings(justOver), 'UNACCOUNTED_TIME').map((finding) => finding.spanIds)).toEqual([['root']]);
      for (const spans of [underMinimum, underShare, leaf]) expect(ofKind(findings(spans), 'UNACCOUNTED_TIME')).toEqual([]);
    });
  });

  it('phrases RETRY, LOOP and N_PLUS_ONE from their detectors', () => {
    const spans = [
      span('agent', '', 0, 10_000, { type: 'AGENT', name: 'agent' }),
      span('fail-1', 'agent', 0, 300, { type: 'LLM', status: 'ERROR' }),
      span('fail-2', 'agent', 400, 900, { type: 'LLM', status: 'ERROR' }),
      span('ok', 'agent', 1000, 1500, { type: 'LLM', name: 'chat' }),
      ...['t-1', 't-2', 't-3'].map((id, at) =>
        span(id, 'agent', 2000 + at * 100, 2050 + at * 100, { type: 'TOOL', toolName: 'search', toolArguments: '{"q":"x"}' }),
      ),
      ...sequence(
        'agent',
        3000,
        5,
        Array.from({ length: 6 }, (): [string, string, number] => ['SELECT orders', 'DB', 30]),
      ),
    ];

    // The agent's own 8 s are UNACCOUNTED_TIME, tested above; keep this test to the three kinds.
    const found = findings(spans, { iterations: 12, projectMedianIterations: 3, thresholds: { unaccountedShare: 1 } });

    expect(ofKind(found, 'RETRY')).toEqual([
      {
        kind: 'RETRY',
        message: `2 failed LLM calls under "agent" before "chat" succeeded, costing ${formatMs(300 + 500)}.`,
        spanIds: ['fail-1', 'fail-2', 'ok'],
      },
    ]);
    expect(ofKind(found, 'LOOP').map((finding) => finding.message)).toEqual([
      'Tool "search" was called 3 times with identical arguments: the agent may be looping.',
      `The agent ran 12 iterations, ${(12 / 3).toFixed(1)}× the project's median of 3: it may be looping.`,
    ]);
    expect(ofKind(found, 'N_PLUS_ONE')).toEqual([
      {
        kind: 'N_PLUS_ONE',
        message: `6 sequential DB calls "SELECT orders" under "agent" took ${formatMs(6 * 30)} in total: batch them or run them concurrently.`,
        spanIds: spans.slice(7).map((call) => call.spanId),
      },
    ]);
    expect(found.map((finding) => finding.kind)).toEqual(['RETRY', 'LOOP', 'LOOP', 'N_PLUS_ONE']);
  });

  describe('LOW_PARALLELISM', () => {
    const agent = span('agent', '', 0, 2000, { type: 'AGENT', name: 'iteration 2' });
    const decide = span('llm', 'agent', 0, 300, { type: 'LLM' });

    it('reports I/O calls run one after another, with what running them together would take', () => {
      const lengths = [300, 500, 200];
      const calls = sequence('agent', 310, 5, [
        ['seat_map', 'TOOL', lengths[0]],
        ['hotel_availability', 'TOOL', lengths[1]],
        ['hotel_notes', 'RETRIEVAL', lengths[2]],
      ]);

      const found = ofKind(findings([agent, decide, ...calls]), 'LOW_PARALLELISM');

      const sum = lengths.reduce((total, length) => total + length, 0);
      expect(found).toEqual([
        {
          kind: 'LOW_PARALLELISM',
          message: `3 calls under "iteration 2" ran one after another (TOOL "seat_map", TOOL "hotel_availability", RETRIEVAL "hotel_notes"), ${formatMs(sum)} in total; run concurrently they could finish in ${formatMs(Math.max(...lengths))}, the longest one.`,
          spanIds: calls.map((call) => call.spanId),
        },
      ]);
    });

    it('stays quiet for parallel calls, a flat agent loop, small savings and runs already reported as N+1', () => {
      const parallel = ['a', 'b', 'c'].map((id) => span(id, 'agent', 310, 800, { type: 'TOOL' }));
      const flatLoop = sequence('agent', 0, 5, [
        ['chat', 'LLM', 200],
        ['search', 'TOOL', 300],
        ['chat', 'LLM', 200],
        ['search', 'TOOL', 300],
        ['chat', 'LLM', 200],
        ['search', 'TOOL', 300],
      ]);
      const quick = sequence('agent', 310, 1, [
        ['a', 'TOOL', 40],
        ['b', 'TOOL', 40],
        ['c', 'TOOL', 40],
      ]);
      const nPlusOne = sequence(
        'agent',
        310,
        5,
        Array.from({ length: 6 }, (): [string, string, number] => ['SELECT', 'DB', 200]),
      );

      for (const spans of [parallel, flatLoop, quick, nPlusOne])
        expect(ofKind(findings([agent, decide, ...spans]), 'LOW_PARALLELISM')).toEqual([]);
    });
  });

  it('finds nothing in a healthy trace', () => {
    const spans = [
      span('root', '', 0, 1000, { type: 'RUN' }),
      span('llm', 'root', 10, 500, { type: 'LLM' }),
      span('tool-a', 'root', 510, 990, { type: 'TOOL' }),
      span('tool-b', 'root', 510, 800, { type: 'TOOL' }),
    ];

    expect(findings(spans)).toEqual([]);
  });
});
