/**
 * Time of `analyseTrace` and of each detector on a generated 10,000-span agent trace (target: well
 * under 50 ms for the whole analysis). Run: `node scripts/build.mjs && node dist/libs/analysis/bench/analyse.bench.js`.
 */
import { performance } from 'node:perf_hooks';
import { analyseTrace, criticalPath, findings, loopSuspected, parallelism, repeatedSiblings, retries, unaccountedBySpan } from '../src';
import type { AnalysisSpan } from '../src';
import { generateAgentTrace } from '../src/testing/span.fixture';

const SPAN_COUNT = 10_000;
const WARMUP_RUNS = 20;
const MEASURED_RUNS = 51;

function measure(label: string, run: () => unknown): void {
  for (let warmup = 0; warmup < WARMUP_RUNS; warmup++) run();
  const timings = Array.from({ length: MEASURED_RUNS }, () => {
    const started = performance.now();
    run();
    return performance.now() - started;
  }).sort((a, b) => a - b);
  const at = (share: number): string => timings[Math.min(timings.length - 1, Math.floor(share * timings.length))].toFixed(2);
  console.log(`${label.padEnd(18)} min ${at(0)} ms   median ${at(0.5)} ms   p95 ${at(0.95)} ms`);
}

const spans: AnalysisSpan[] = generateAgentTrace(SPAN_COUNT);
const tools = spans.filter((span) => span.type === 'TOOL').length;
console.log(`${spans.length} spans (${tools} tool calls with arguments), ${MEASURED_RUNS} runs each after ${WARMUP_RUNS} warm-up runs`);
measure('analyseTrace', () => analyseTrace(spans, { iterations: 40, projectMedianIterations: 6 }));
measure('criticalPath', () => criticalPath(spans));
measure('unaccountedBySpan', () => unaccountedBySpan(spans));
measure('parallelism', () => parallelism(spans));
measure('retries', () => retries(spans));
measure('loopSuspected', () => loopSuspected(spans));
measure('repeatedSiblings', () => repeatedSiblings(spans));
measure('findings', () => findings(spans));
