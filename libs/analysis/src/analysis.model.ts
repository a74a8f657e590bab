/**
 * Inputs and outputs of the trace analysis. Times come in as bigint nanoseconds (as stored) and go
 * out as millisecond numbers; `startMs`/`endMs` are offsets from the trace's earliest span start, so
 * they stay exact for any trace shorter than 2^53 ns (104 days).
 */

/** The GraphQL `SpanType` values; kept as `string` so an unknown type from a newer normaliser still analyses. */
export type SpanTypeName =
  'RUN' | 'AGENT' | 'LLM' | 'TOOL' | 'RETRIEVAL' | 'EMBEDDING' | 'RERANK' | 'GUARDRAIL' | 'EVALUATION' | 'CHAIN' | 'HTTP' | 'DB' | 'OTHER';

export type SpanStatusName = 'UNSET' | 'OK' | 'ERROR';

export interface AnalysisSpan {
  spanId: string;
  /** '' for a root span. A parent that is absent from the trace makes this span an extra root. */
  parentSpanId: string;
  name: string;
  type: SpanTypeName | string;
  startNs: bigint;
  endNs: bigint;
  status: SpanStatusName;
  toolName?: string;
  /** JSON text as the model produced it; '' or absent when not captured. */
  toolArguments?: string;
}

/** One span on the critical path. */
export interface CriticalPathStep {
  spanId: string;
  name: string;
  type: string;
  /** Offset of the span's start from the trace's earliest start. */
  startMs: number;
  endMs: number;
  durationMs: number;
  /** The span's own time on the path: the path time not covered by its children on the path. */
  selfMs: number;
}

export interface Parallelism {
  /** Sum of all span durations ÷ trace wall time; nested spans count once each, so a chain of three reads 3. */
  overall: number;
  /**
   * Sum of every span's own time (its duration not covered by its children) ÷ wall time: how many
   * spans, on average, were doing their own work at once. A strictly sequential trace reads 1,
   * however deep its nesting; two tools side by side for the whole trace read 2.
   */
  concurrency: number;
  sumMs: number;
  wallMs: number;
  /** Per span with ≥ 2 children: sum of the children's durations ÷ (last child end − first child start). */
  byParent: ReadonlyMap<string, number>;
}

export interface RetryGroup {
  /** The siblings' parentSpanId ('' for roots). */
  parentSpanId: string;
  failedSpanIds: string[];
  succeededSpanId: string;
  /** Summed duration of the failed attempts: latency the retries cost. */
  failedMs: number;
}

export interface RetryReport {
  groups: RetryGroup[];
  /** Failed LLM attempts that were followed by a success (sum of the groups' failures). */
  failedAttempts: number;
}

export type LoopReason =
  | {
      kind: 'REPEATED_TOOL_CALL';
      toolName: string;
      calls: number;
      /** True when every call's normalised arguments are equal, false when only similar. */
      identical: boolean;
      spanIds: string[];
    }
  | { kind: 'ITERATIONS'; iterations: number; projectMedianIterations: number; spanIds: string[] };

export interface LoopReport {
  suspected: boolean;
  reasons: LoopReason[];
}

/** A run of sequential same-name, same-type siblings (the N+1 pattern). */
export interface RepeatedSiblingRun {
  parentSpanId: string;
  name: string;
  type: string;
  count: number;
  spanIds: string[];
  /** Sum of the run's span durations (they do not overlap, so this is also time spent). */
  totalMs: number;
}

export type FindingKind = 'CRITICAL_PATH_DOMINATED_BY' | 'UNACCOUNTED_TIME' | 'RETRY' | 'LOOP' | 'N_PLUS_ONE' | 'LOW_PARALLELISM';

export interface Finding {
  kind: FindingKind;
  /** English, for people: says what, where and how much. */
  message: string;
  spanIds: string[];
}

export interface TraceAnalysis {
  spanCount: number;
  /** Max span end − min span start: the trace's `durationMs`, wall time rather than a sum. */
  wallMs: number;
  criticalPath: CriticalPathStep[];
  /** Unaccounted time of every span, by span id (a leaf's is its whole duration). */
  unaccountedMs: ReadonlyMap<string, number>;
  parallelism: Parallelism;
  retries: RetryReport;
  loop: LoopReport;
  repeatedSiblings: RepeatedSiblingRun[];
  findings: Finding[];
}
