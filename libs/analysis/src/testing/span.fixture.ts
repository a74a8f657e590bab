import type { AnalysisSpan } from '../analysis.model';

/** An arbitrary wall-clock origin, so tests see real-sized nanosecond bigints. */
export const ORIGIN_NS = 1_750_000_000_123_456_789n;

export function nsAt(ms: number): bigint {
  return ORIGIN_NS + BigInt(Math.round(ms * 1e6));
}

/** A span from millisecond offsets: `span('llm', 'agent', 100, 350, { type: 'LLM' })`. */
export function span(
  spanId: string,
  parentSpanId: string,
  startMs: number,
  endMs: number,
  fields: Partial<AnalysisSpan> = {},
): AnalysisSpan {
  return { spanId, parentSpanId, name: spanId, type: 'OTHER', startNs: nsAt(startMs), endNs: nsAt(endMs), status: 'OK', ...fields };
}

/** Deterministic pseudo-random numbers in [0, 1) (a 32-bit LCG): generated traces are the same every run. */
export function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = randomSource(seed);
  const copy = [...items];
  for (let at = copy.length - 1; at > 0; at--) {
    const other = Math.floor(random() * (at + 1));
    [copy[at], copy[other]] = [copy[other], copy[at]];
  }
  return copy;
}

/**
 * A large agent trace shaped like a typical agent turn: a RUN root over sequential AGENT iterations,
 * each an LLM call (sometimes retried after a failure) followed by 1-4 parallel TOOL calls, some of
 * which make HTTP or DB calls of their own, with gaps between everything. Stops once it has `spanCount`
 * spans (an iteration may add up to two more).
 */
export function generateAgentTrace(spanCount: number, seed = 7): AnalysisSpan[] {
  const random = randomSource(seed);
  const spans: AnalysisSpan[] = [];
  const between = (low: number, high: number): number => low + random() * (high - low);
  const add = (parentSpanId: string, startMs: number, endMs: number, fields: Partial<AnalysisSpan>): string => {
    const spanId = `s${spans.length.toString(16).padStart(15, '0')}`;
    spans.push(span(spanId, parentSpanId, startMs, endMs, { name: fields.type?.toLowerCase() ?? 'span', ...fields }));
    return spanId;
  };
  const rootAt = spans.length;
  const rootId = add('', 0, 0, { type: 'RUN', name: 'run' });
  let cursor = between(1, 5);
  for (let iteration = 0; spans.length < spanCount; iteration++) {
    const agentAt = spans.length;
    const agentId = add(rootId, cursor, cursor, { type: 'AGENT', name: `iteration ${iteration}` });
    let at = cursor + between(0.5, 2);
    if (random() < 0.1) {
      const failedEnd = at + between(20, 200);
      add(agentId, at, failedEnd, { type: 'LLM', name: 'chat', status: 'ERROR' });
      at = failedEnd + between(1, 50);
    }
    const llmEnd = at + between(200, 1500);
    add(agentId, at, llmEnd, { type: 'LLM', name: 'chat' });
    let iterationEnd = llmEnd;
    const toolCount = 1 + Math.floor(random() * 4);
    for (let tool = 0; tool < toolCount && spans.length < spanCount; tool++) {
      const toolStart = llmEnd + between(0.5, 5);
      const toolEnd = toolStart + between(10, 900);
      const name = `tool_${Math.floor(random() * 12)}`;
      const toolId = add(agentId, toolStart, toolEnd, {
        type: 'TOOL',
        name,
        toolName: name,
        toolArguments: `{"query":"q${iteration}-${tool}","limit":${tool}}`,
      });
      if (random() < 0.4 && spans.length < spanCount)
        add(toolId, toolStart + 1, toolEnd - 1, { type: random() < 0.5 ? 'HTTP' : 'DB', name: 'call' });
      iterationEnd = Math.max(iterationEnd, toolEnd);
    }
    iterationEnd += between(0.5, 3);
    spans[agentAt] = { ...spans[agentAt], endNs: nsAt(iterationEnd) };
    cursor = iterationEnd + between(0.5, 3);
  }
  spans[rootAt] = { ...spans[rootAt], endNs: nsAt(cursor) };
  return spans;
}
