import type { AnalysisSpan, Parallelism } from './analysis.model';
import { buildTraceIndex, durationMs, type TraceIndex } from './trace.index';
import { INFINITY, max, min, toNumber } from './intrinsics';

const NS_PER_MS = 1e6;

/**
 * Time of `span` not covered by any of `children`: its duration minus the union of the children's
 * intervals clipped to the span, in ms. Overlapping (parallel) children count once; a child sticking
 * out of the span counts only inside it. `children` may come in any order.
 */
export function unaccountedMs(span: AnalysisSpan, children: readonly AnalysisSpan[]): number {
  const duration = span.endNs > span.startNs ? toNumber(span.endNs - span.startNs) / NS_PER_MS : 0;
  const startMs = children.map((child) => toNumber(child.startNs - span.startNs) / NS_PER_MS);
  const endMs = children.map((child) => toNumber(child.endNs - span.startNs) / NS_PER_MS);
  const byStart = children.map((_, at) => at).sort((a, b) => startMs[a] - startMs[b]);
  return duration - coveredMs(0, duration, byStart, startMs, endMs);
}

/** Unaccounted time of every span of a trace, by span id; a leaf's is its whole duration. */
export function unaccountedBySpan(spans: readonly AnalysisSpan[]): Map<string, number> {
  return unaccountedOf(buildTraceIndex(spans));
}

export function unaccountedOf(index: TraceIndex): Map<string, number> {
  const result = new Map<string, number>();
  const { startMs, endMs } = index;
  for (let node = 0; node < index.spans.length; node++) {
    const covered = coveredMs(startMs[node], endMs[node], index.children[node], startMs, endMs);
    result.set(index.spans[node].spanId, endMs[node] - startMs[node] - covered);
  }
  return result;
}

/**
 * Length of the union of the intervals of `nodes` (sorted by start) clipped to [from, to]: one
 * merging pass. Clipping keeps the start order, so no re-sort.
 */
export function coveredMs(
  from: number,
  to: number,
  nodes: readonly number[],
  startMs: readonly number[],
  endMs: readonly number[],
): number {
  let covered = 0;
  let runStart = 0;
  let runEnd = -INFINITY;
  for (const node of nodes) {
    const start = max(startMs[node], from);
    const end = min(endMs[node], to);
    if (end <= start) continue;
    if (start > runEnd) {
      if (runEnd > runStart) covered += runEnd - runStart;
      runStart = start;
      runEnd = end;
    } else if (end > runEnd) {
      runEnd = end;
    }
  }
  if (runEnd > runStart) covered += runEnd - runStart;
  return covered;
}

export function parallelism(spans: readonly AnalysisSpan[]): Parallelism {
  return parallelismOf(buildTraceIndex(spans));
}

/**
 * Summed durations over wall time, and summed own times (`ownMs`, the spans' unaccounted time) over
 * wall time. A zero-length window (all spans instantaneous) reads 1: nothing
 * measurably ran side by side, and 1 keeps the number finite for charts.
 */
export function parallelismOf(index: TraceIndex, ownMs: ReadonlyMap<string, number> = unaccountedOf(index)): Parallelism {
  let sumMs = 0;
  for (let node = 0; node < index.spans.length; node++) sumMs += durationMs(index, node);
  const byParent = new Map<string, number>();
  for (let node = 0; node < index.spans.length; node++) {
    const children = index.children[node];
    if (children.length < 2) continue;
    let childSum = 0;
    let first = INFINITY;
    let last = -INFINITY;
    for (const child of children) {
      childSum += durationMs(index, child);
      first = min(first, index.startMs[child]);
      last = max(last, index.endMs[child]);
    }
    byParent.set(index.spans[node].spanId, ratio(childSum, last - first));
  }
  const overall = index.spans.length === 0 ? 0 : ratio(sumMs, index.wallMs);
  let ownSumMs = 0;
  for (const own of ownMs.values()) ownSumMs += own;
  const concurrency = index.spans.length === 0 ? 0 : ratio(ownSumMs, index.wallMs);
  return { overall, concurrency, sumMs, wallMs: index.wallMs, byParent };
}

function ratio(sumMs: number, wallMs: number): number {
  return wallMs > 0 ? sumMs / wallMs : 1;
}
