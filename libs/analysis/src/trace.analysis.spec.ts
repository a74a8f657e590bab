import type { AnalysisSpan, CriticalPathStep } from './analysis.model';
import { criticalPath } from './critical-path.analysis';
import { findings } from './trace.findings';
import { analyseTrace } from './trace.analysis';
import { generateAgentTrace, shuffled, span } from './testing/span.fixture';

const NS_PER_MS = 1e6;

function lengthMs(item: AnalysisSpan): number {
  return Number(item.endNs - item.startNs) / NS_PER_MS;
}

describe('analyseTrace', () => {
  it('returns every analysis of a small trace at once, consistent with the single functions', () => {
    const spans = [
      span('root', '', 0, 1000, { type: 'RUN' }),
      span('llm', 'root', 0, 700, { type: 'LLM' }),
      span('tool', 'root', 750, 900, { type: 'TOOL' }),
    ];

    const analysis = analyseTrace(spans);

    expect(analysis.spanCount).toBe(3);
    expect(analysis.wallMs).toBe(1000);
    expect(analysis.criticalPath).toEqual(criticalPath(spans));
    expect(analysis.findings).toEqual(findings(spans));
    expect(Object.fromEntries(analysis.unaccountedMs)).toEqual({ root: 1000 - 700 - 150, llm: 700, tool: 150 });
    expect(analysis.parallelism.overall).toBeCloseTo((1000 + 700 + 150) / 1000, 12);
  });

  it('handles an empty trace', () => {
    const analysis = analyseTrace([]);

    expect(analysis).toMatchObject({ spanCount: 0, wallMs: 0, criticalPath: [], findings: [], retries: { groups: [], failedAttempts: 0 } });
  });

  describe('a generated 10,000-span agent trace', () => {
    const spans = generateAgentTrace(10_000);
    const byId = new Map(spans.map((item) => [item.spanId, item]));
    const analysis = analyseTrace(spans);
    const path = analysis.criticalPath;
    const root = spans[0];

    it('has the size and wall time of its input', () => {
      const earliest = spans.reduce((min, item) => (item.startNs < min ? item.startNs : min), root.startNs);
      const latest = spans.reduce((max, item) => (item.endNs > max ? item.endNs : max), root.endNs);

      expect(analysis.spanCount).toBe(spans.length);
      expect(spans.length).toBeGreaterThanOrEqual(10_000);
      expect(analysis.wallMs).toBeCloseTo(Number(latest - earliest) / NS_PER_MS, 6);
    });

    it('starts the critical path at the root and explains exactly its duration', () => {
      const selfTotal = path.reduce((sum, step) => sum + step.selfMs, 0);

      expect(path[0].spanId).toBe(root.spanId);
      expect(selfTotal).toBeCloseTo(lengthMs(root), 6);
      for (const step of path) expect(step.selfMs).toBeGreaterThanOrEqual(-1e-9);
    });

    it('lists each path span after its parent, its path children in time order, not overlapping and inside it', () => {
      const onPath = new Map<string, CriticalPathStep>();
      const pathChildren = new Map<string, CriticalPathStep[]>();
      for (const step of path) {
        const parentId = byId.get(step.spanId)?.parentSpanId ?? '';
        if (step !== path[0]) expect(onPath.has(parentId)).toBe(true);
        onPath.set(step.spanId, step);
        pathChildren.set(parentId, [...(pathChildren.get(parentId) ?? []), step]);
      }
      for (const [parentId, children] of pathChildren) {
        const parent = onPath.get(parentId);
        if (!parent) continue;
        children.forEach((child, at) => {
          expect(child.startMs).toBeGreaterThanOrEqual(parent.startMs);
          expect(child.endMs).toBeLessThanOrEqual(parent.endMs);
          if (at > 0) expect(child.startMs).toBeGreaterThanOrEqual(children[at - 1].endMs);
        });
      }
    });

    it('ends the path children of every path span with its last-ending child', () => {
      // The generator keeps children inside their parents, so no clipping is involved.
      const lastEnd = new Map<string, bigint>();
      for (const item of spans) {
        if (item.parentSpanId && item.endNs > (lastEnd.get(item.parentSpanId) ?? 0n)) lastEnd.set(item.parentSpanId, item.endNs);
      }
      const lastPathChild = new Map<string, string>();
      for (const step of path.slice(1)) lastPathChild.set(byId.get(step.spanId)?.parentSpanId ?? '', step.spanId);

      for (const step of path) {
        const expectedEnd = lastEnd.get(step.spanId);
        const child = lastPathChild.get(step.spanId);
        expect(child === undefined ? undefined : byId.get(child)?.endNs).toBe(expectedEnd);
      }
    });

    it('keeps every unaccounted time between 0 and the span duration', () => {
      for (const item of spans) {
        const unaccounted = analysis.unaccountedMs.get(item.spanId) ?? NaN;
        expect(unaccounted).toBeGreaterThanOrEqual(-1e-9);
        expect(unaccounted).toBeLessThanOrEqual(lengthMs(item) + 1e-9);
      }
    });

    it('finds every generated retry and the summed parallelism of the input', () => {
      const failedCalls = spans.filter((item) => item.type === 'LLM' && item.status === 'ERROR').length;
      const sumMs = spans.reduce((sum, item) => sum + lengthMs(item), 0);

      expect(failedCalls).toBeGreaterThan(0);
      expect(analysis.retries.failedAttempts).toBe(failedCalls);
      expect(analysis.parallelism.overall).toBeCloseTo(sumMs / analysis.wallMs, 6);
    });

    it('gives the same result whatever order the spans arrive in', () => {
      expect(analyseTrace(shuffled(spans, 11))).toEqual(analysis);
    });
    // Its speed is measured where speed targets live: bench:query's trace10kSpans case runs this
    // analysis (the critical path of a 10,000-span trace) through GraphQL; no timed test here.
  });
});
