/**
 * Thresholds of the detectors. They are judgement calls, not measurements: each says what it
 * guards against, and README.md lists them for users of the findings.
 */
export interface AnalysisThresholds {
  /** CRITICAL_PATH_DOMINATED_BY when one work type owns more than this share of the critical path. */
  criticalPathShare: number;
  /** UNACCOUNTED_TIME when a span's uncovered time exceeds this share of the trace wall time... */
  unaccountedShare: number;
  /** ...and this many ms (so a 50 ms trace does not report 20 ms of glue code). */
  unaccountedMinMs: number;
  /** LOOP: calls of one tool with near-identical arguments. */
  loopMinCalls: number;
  /** LOOP: Dice similarity of the argument values' words at or above which two calls are "near-identical". */
  argumentSimilarity: number;
  /** LOOP: iterations are "far over" the project median when ≥ factor × median... */
  iterationsFactor: number;
  /** ...and ≥ median + margin (so a median of 1 does not flag 3 iterations). */
  iterationsMargin: number;
  /** N_PLUS_ONE: sequential same-name, same-type siblings in a row. */
  repeatedSiblingsMin: number;
  /** LOW_PARALLELISM: sequential I/O siblings in a row (TOOL, RETRIEVAL, HTTP, DB, EMBEDDING, RERANK). */
  sequentialCallsMin: number;
  /** LOW_PARALLELISM: time running them concurrently would save (sum − longest), in ms... */
  sequentialSavingMinMs: number;
  /** ...and as a share of the trace wall time. */
  sequentialSavingShare: number;
}

export const DEFAULT_THRESHOLDS: Readonly<AnalysisThresholds> = Object.freeze({
  criticalPathShare: 0.6,
  unaccountedShare: 0.3,
  unaccountedMinMs: 100,
  loopMinCalls: 3,
  argumentSimilarity: 0.9,
  iterationsFactor: 3,
  iterationsMargin: 5,
  repeatedSiblingsMin: 5,
  sequentialCallsMin: 3,
  sequentialSavingMinMs: 100,
  sequentialSavingShare: 0.1,
});

export interface AnalysisOptions {
  /**
   * The trace's iterations, computed by the caller: the root's agent.iterations, else its AGENT
   * children, else its non-error LLM spans.
   */
  iterations?: number;
  /** Median iterations of the project's recent traces; without it the iterations check is skipped. */
  projectMedianIterations?: number;
  thresholds?: Partial<AnalysisThresholds>;
}

export function resolveThresholds(options: AnalysisOptions | undefined): AnalysisThresholds {
  return { ...DEFAULT_THRESHOLDS, ...options?.thresholds };
}
