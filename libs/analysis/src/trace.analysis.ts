import type { AnalysisSpan, TraceAnalysis } from './analysis.model';
import type { AnalysisOptions } from './analysis.options';
import { criticalPathOf } from './critical-path.analysis';
import { loopOf } from './loop.analysis';
import { retriesOf } from './retry.analysis';
import { repeatedSiblingsOf } from './sequential-runs.analysis';
import { parallelismOf, unaccountedOf } from './time-coverage.analysis';
import { findingsOf } from './trace.findings';
import { buildTraceIndex } from './trace.index';

/**
 * Every analysis of one trace from a single index (ids resolved, bigint times converted and
 * siblings sorted once). Pure and synchronous; a 10,000-span trace takes a few milliseconds
 * (README.md, "Speed").
 */
export function analyseTrace(spans: readonly AnalysisSpan[], options?: AnalysisOptions): TraceAnalysis {
  const index = buildTraceIndex(spans);
  const criticalPath = criticalPathOf(index);
  const unaccountedMs = unaccountedOf(index);
  const retries = retriesOf(index);
  const loop = loopOf(index, options);
  const repeatedSiblings = repeatedSiblingsOf(index, options);
  const findings = findingsOf(index, { criticalPath, unaccountedMs, retries, loop, repeatedSiblings }, options);
  return {
    spanCount: index.spans.length,
    wallMs: index.wallMs,
    criticalPath,
    unaccountedMs,
    parallelism: parallelismOf(index, unaccountedMs),
    retries,
    loop,
    repeatedSiblings,
    findings,
  };
}
