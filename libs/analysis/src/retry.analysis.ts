import type { AnalysisSpan, RetryGroup, RetryReport } from './analysis.model';
import { buildTraceIndex, durationMs, type TraceIndex } from './trace.index';

/**
 * Retried model calls. A retry is recorded as sibling LLM spans under one parent, each with its own
 * status, not as one span with a retry counter: so among the LLM children of one parent, taken by
 * start time, one or more ERROR spans followed by a non-ERROR one form a group. UNSET counts as success (OTel's
 * default status for a call that did not fail). Failures never followed by a success are not a
 * retry group: the call was given up, which `errorCount` already shows. Spans of other types between
 * the attempts do not break a group, and the attempts need not share a name, so a fallback to
 * another model counts as a retry.
 */
export function retries(spans: readonly AnalysisSpan[]): RetryReport {
  return retriesOf(buildTraceIndex(spans));
}

export function retriesOf(index: TraceIndex): RetryReport {
  const groups: RetryGroup[] = [];
  for (const [parentSpanId, siblings] of index.siblings) {
    let failed: number[] = [];
    for (const node of siblings) {
      const span = index.spans[node];
      if (span.type !== 'LLM') continue;
      if (span.status === 'ERROR') {
        failed.push(node);
        continue;
      }
      if (failed.length > 0) {
        const failedMs = failed.reduce((sum, attempt) => sum + durationMs(index, attempt), 0);
        groups.push({
          parentSpanId,
          failedSpanIds: failed.map((attempt) => index.spans[attempt].spanId),
          succeededSpanId: span.spanId,
          failedMs,
        });
      }
      failed = [];
    }
  }
  // Sibling groups come in input order; report in time order so the result does not depend on it.
  const firstStart = (group: RetryGroup): number => index.startMs[index.position.get(group.failedSpanIds[0]) ?? 0];
  groups.sort((a, b) => firstStart(a) - firstStart(b));
  return { groups, failedAttempts: groups.reduce((sum, group) => sum + group.failedSpanIds.length, 0) };
}
