import type { AnalysisSpan, CriticalPathStep, Finding, LoopReport, RepeatedSiblingRun, RetryReport } from './analysis.model';
import { resolveThresholds, type AnalysisOptions, type AnalysisThresholds } from './analysis.options';
import { criticalPathOf } from './critical-path.analysis';
import { formatMs, formatShare, plural, underParent } from './finding.format';
import { loopOf } from './loop.analysis';
import { retriesOf } from './retry.analysis';
import { inTimeOrder, repeatedSiblingsOf, sequentialRuns } from './sequential-runs.analysis';
import { unaccountedOf } from './time-coverage.analysis';
import { buildTraceIndex, durationMs, type TraceIndex } from './trace.index';
import { max } from './intrinsics';

/** The detectors' results that findings are phrased from (`analyseTrace` computes each once). */
export interface DetectorResults {
  criticalPath: CriticalPathStep[];
  unaccountedMs: ReadonlyMap<string, number>;
  retries: RetryReport;
  loop: LoopReport;
  repeatedSiblings: RepeatedSiblingRun[];
}

/** What was detected in a trace, in this order: critical path, unaccounted time, retries, loops, N+1, low parallelism. */
export function findings(spans: readonly AnalysisSpan[], options?: AnalysisOptions): Finding[] {
  const index = buildTraceIndex(spans);
  const results: DetectorResults = {
    criticalPath: criticalPathOf(index),
    unaccountedMs: unaccountedOf(index),
    retries: retriesOf(index),
    loop: loopOf(index, options),
    repeatedSiblings: repeatedSiblingsOf(index, options),
  };
  return findingsOf(index, results, options);
}

export function findingsOf(index: TraceIndex, results: DetectorResults, options?: AnalysisOptions): Finding[] {
  const thresholds = resolveThresholds(options);
  return [
    ...criticalPathDominance(results.criticalPath, thresholds),
    ...unaccountedTime(index, results.unaccountedMs, thresholds),
    ...results.retries.groups.map((group): Finding => {
      const succeeded = index.spans[index.position.get(group.succeededSpanId) ?? 0];
      return {
        kind: 'RETRY',
        message: `${plural(group.failedSpanIds.length, 'failed LLM call')} ${underParent(index, group.parentSpanId)} before "${succeeded.name}" succeeded, costing ${formatMs(group.failedMs)}.`,
        spanIds: [...group.failedSpanIds, group.succeededSpanId],
      };
    }),
    ...results.loop.reasons.map((reason): Finding => ({
      kind: 'LOOP',
      message:
        reason.kind === 'REPEATED_TOOL_CALL'
          ? `Tool "${reason.toolName}" was called ${reason.calls} times with ${reason.identical ? 'identical' : 'near-identical'} arguments: the agent may be looping.`
          : `The agent ran ${reason.iterations} iterations, ${(reason.iterations / reason.projectMedianIterations).toFixed(1)}× the project's median of ${reason.projectMedianIterations}: it may be looping.`,
      spanIds: reason.spanIds,
    })),
    ...results.repeatedSiblings.map((run): Finding => ({
      kind: 'N_PLUS_ONE',
      message: `${run.count} sequential ${run.type} calls "${run.name}" ${underParent(index, run.parentSpanId)} took ${formatMs(run.totalMs)} in total: batch them or run them concurrently.`,
      spanIds: run.spanIds,
    })),
    ...lowParallelism(index, results.repeatedSiblings, thresholds),
  ];
}

/** Container spans' own time on the path is glue code, reported as UNACCOUNTED_TIME instead. */
const CONTAINER_TYPES = new Set(['RUN', 'AGENT', 'CHAIN']);

/**
 * One kind of work owning more than `criticalPathShare` (60%) of the critical path: where to look
 * first to make the trace faster (only the path sets latency; off-path work is free for it).
 */
function criticalPathDominance(path: readonly CriticalPathStep[], thresholds: AnalysisThresholds): Finding[] {
  const totalMs = path.reduce((sum, step) => sum + step.selfMs, 0);
  if (totalMs <= 0) return [];
  const byType = new Map<string, CriticalPathStep[]>();
  for (const step of path) {
    if (CONTAINER_TYPES.has(step.type) || step.selfMs <= 0) continue;
    const steps = byType.get(step.type);
    if (steps) steps.push(step);
    else byType.set(step.type, [step]);
  }
  for (const [type, steps] of byType) {
    const ms = steps.reduce((sum, step) => sum + step.selfMs, 0);
    if (ms / totalMs <= thresholds.criticalPathShare) continue;
    const longest = steps.reduce((best, step) => (step.selfMs > best.selfMs ? step : best));
    return [
      {
        kind: 'CRITICAL_PATH_DOMINATED_BY',
        message: `${type} spans make ${formatShare(ms / totalMs)} of the critical path (${formatMs(ms)} of ${formatMs(totalMs)}, ${plural(steps.length, 'span')}); the longest is "${longest.name}" with ${formatMs(longest.selfMs)}.`,
        spanIds: steps.map((step) => step.spanId),
      },
    ];
  }
  return [];
}

/**
 * Spans with children whose uncovered time is > `unaccountedShare` (30%) of the trace and >
 * `unaccountedMinMs` (100 ms): uninstrumented work or waiting. Leaves are skipped, their whole
 * duration is their work.
 */
function unaccountedTime(index: TraceIndex, unaccounted: ReadonlyMap<string, number>, thresholds: AnalysisThresholds): Finding[] {
  const floorMs = Math.max(thresholds.unaccountedMinMs, thresholds.unaccountedShare * index.wallMs);
  const found: { ms: number; finding: Finding }[] = [];
  index.spans.forEach((span, node) => {
    const ms = unaccounted.get(span.spanId) ?? 0;
    if (index.children[node].length === 0 || ms <= floorMs) return;
    const message = `"${span.name}" (${span.type}) spent ${formatMs(ms)} of its ${formatMs(durationMs(index, node))} outside any child span, ${formatShare(ms / index.wallMs)} of the trace's ${formatMs(index.wallMs)}: uninstrumented work or waiting.`;
    found.push({ ms, finding: { kind: 'UNACCOUNTED_TIME', message, spanIds: [span.spanId] } });
  });
  return found.sort((a, b) => b.ms - a.ms).map(({ finding }) => finding);
}

/** Calls that wait on something else; the candidates for running side by side. */
const IO_TYPES = new Set(['TOOL', 'RETRIEVAL', 'HTTP', 'DB', 'EMBEDDING', 'RERANK']);

/**
 * ≥ `sequentialCallsMin` (3) consecutive I/O siblings run one after another, where running them
 * concurrently would save (sum − longest) ≥ 100 ms and ≥ 10% of the trace. Any other sibling between
 * two calls breaks the run: an LLM call there means the later call may depend on the model's reading
 * of the earlier result (a flat agent loop is not parallelisable). Runs wholly reported as N+1 are
 * not repeated.
 */
function lowParallelism(index: TraceIndex, nPlusOne: readonly RepeatedSiblingRun[], thresholds: AnalysisThresholds): Finding[] {
  const reported = new Set(nPlusOne.flatMap((run) => run.spanIds));
  const isIo = (node: number): boolean => IO_TYPES.has(index.spans[node].type);
  const found: Finding[] = [];
  for (const [parentSpanId, siblings] of index.siblings) {
    for (const run of sequentialRuns(index, siblings, (_first, next) => isIo(next), isIo)) {
      if (run.length < thresholds.sequentialCallsMin) continue;
      if (run.every((node) => reported.has(index.spans[node].spanId))) continue;
      const sumMs = run.reduce((sum, node) => sum + durationMs(index, node), 0);
      const longestMs = run.reduce((longest, node) => max(longest, durationMs(index, node)), 0);
      const savingMs = sumMs - longestMs;
      if (savingMs < thresholds.sequentialSavingMinMs || savingMs < thresholds.sequentialSavingShare * index.wallMs) continue;
      found.push({
        kind: 'LOW_PARALLELISM',
        message: `${run.length} calls ${underParent(index, parentSpanId)} ran one after another (${describeCalls(index, run)}), ${formatMs(sumMs)} in total; run concurrently they could finish in ${formatMs(longestMs)}, the longest one.`,
        spanIds: run.map((node) => index.spans[node].spanId),
      });
    }
  }
  return inTimeOrder(index, found);
}

function describeCalls(index: TraceIndex, run: readonly number[]): string {
  const shown = run.slice(0, 4).map((node) => `${index.spans[node].type} "${index.spans[node].name}"`);
  return run.length > shown.length ? `${shown.join(', ')}, …` : shown.join(', ');
}
