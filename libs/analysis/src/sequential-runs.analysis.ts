import type { AnalysisSpan, RepeatedSiblingRun } from './analysis.model';
import { resolveThresholds, type AnalysisOptions } from './analysis.options';
import { buildTraceIndex, durationMs, type TraceIndex } from './trace.index';

/**
 * The N+1 pattern: ≥ `repeatedSiblingsMin` (5) consecutive siblings, by start, with the same name
 * and type, each starting at or after the previous one ended. Consecutive means no other sibling
 * starts in between; "at or after" lets back-to-back calls (end = next start) count as sequential.
 * Five because two to four identical calls are often legitimate (a page or two, a retry); from five
 * on, a batch or a parallel fan-out is nearly always the fix.
 */
export function repeatedSiblings(spans: readonly AnalysisSpan[], options?: AnalysisOptions): RepeatedSiblingRun[] {
  return repeatedSiblingsOf(buildTraceIndex(spans), options);
}

export function repeatedSiblingsOf(index: TraceIndex, options?: AnalysisOptions): RepeatedSiblingRun[] {
  const minCount = resolveThresholds(options).repeatedSiblingsMin;
  const sameCall = (first: number, next: number): boolean =>
    index.spans[first].name === index.spans[next].name && index.spans[first].type === index.spans[next].type;
  const result: RepeatedSiblingRun[] = [];
  for (const [parentSpanId, siblings] of index.siblings) {
    for (const run of sequentialRuns(index, siblings, sameCall)) {
      if (run.length < minCount) continue;
      const first = index.spans[run[0]];
      const totalMs = run.reduce((sum, node) => sum + durationMs(index, node), 0);
      result.push({
        parentSpanId,
        name: first.name,
        type: first.type,
        count: run.length,
        spanIds: run.map((node) => index.spans[node].spanId),
        totalMs,
      });
    }
  }
  return inTimeOrder(index, result);
}

/**
 * Maximal runs (≥ 2 spans) of consecutive `siblings` (sorted by start) in which each span starts at or
 * after the previous one ended and `sameRun(first, next)` holds. A span that breaks a run starts the
 * next one when `canStart` allows it.
 */
export function sequentialRuns(
  index: TraceIndex,
  siblings: readonly number[],
  sameRun: (first: number, next: number) => boolean,
  canStart: (node: number) => boolean = () => true,
): number[][] {
  const runs: number[][] = [];
  let run: number[] = [];
  for (const node of siblings) {
    if (run.length > 0 && index.startMs[node] >= index.endMs[run[run.length - 1]] && sameRun(run[0], node)) {
      run.push(node);
      continue;
    }
    if (run.length > 1) runs.push(run);
    run = canStart(node) ? [node] : [];
  }
  if (run.length > 1) runs.push(run);
  return runs;
}

/** Sibling groups come in input order; sort by first span so results do not depend on it. */
export function inTimeOrder<T extends { spanIds: string[] }>(index: TraceIndex, items: T[]): T[] {
  const firstStart = (item: T): number => index.startMs[index.position.get(item.spanIds[0]) ?? 0];
  return items.sort((a, b) => firstStart(a) - firstStart(b));
}
