/** What a cost report counts over one window. Costs in USD; tokens and counts are plain integers. */
export interface ReportTotals {
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  traceCount: number;
  spanCount: number;
}

/** Relative change, current vs previous window: 0.25 = +25 %; null when the previous value is 0 (no ratio exists). */
export interface ReportChange {
  costUsd: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  traceCount: number | null;
}

/** One row of `costBreakdown`: `keys` line up with `CostReport.groupBy` (the GraphQL `CostRow`). */
export interface ReportBreakdownRow {
  keys: string[];
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  spanCount: number;
}

/** A score name's summary over a session, as `sessions { feedback { name count avg } }`; avg is null for non-numeric scores. */
export interface ReportFeedbackSummary {
  name: string;
  count: number;
  avg: number | null;
}

export interface ReportSession {
  sessionId: string;
  costUsd: number;
  traceCount: number;
  feedback: ReportFeedbackSummary[];
}

export interface ReportTrace {
  traceId: string;
  rootName: string | null;
  costUsd: number;
  durationMs: number;
  startTime: string;
}

/**
 * A stored cost report: the JSON delivered to the webhook and the input of the CSV and HTML
 * renderers. All instants are ISO-8601 UTC strings; the window is half-open, [windowStart, windowEnd).
 */
export interface CostReport {
  id: string;
  projectId: string;
  projectName: string;
  /** null for a report run by hand without a schedule. */
  scheduleId: string | null;
  windowStart: string;
  windowEnd: string;
  /** The schedule's IANA time zone: the cron ran in it, and the HTML shows local times in it. */
  timezone: string;
  generatedAt: string;
  totals: ReportTotals;
  /** The window of equal length just before this one: [windowStart − length, windowStart). */
  previousTotals: ReportTotals;
  change: ReportChange;
  /** CostDimension names, e.g. ['MODEL', 'DAY']; each breakdown row has one key per entry. */
  groupBy: string[];
  breakdown: ReportBreakdownRow[];
  topSessions: ReportSession[];
  topTraces: ReportTrace[];
  /** When false the sessions carry no feedback and the renderers leave the feedback column out. */
  includeFeedback: boolean;
}

export function relativeChange(current: number, previous: number): number | null {
  return previous === 0 ? null : (current - previous) / previous;
}

export function computeChange(current: ReportTotals, previous: ReportTotals): ReportChange {
  return {
    costUsd: relativeChange(current.costUsd, previous.costUsd),
    inputTokens: relativeChange(current.inputTokens, previous.inputTokens),
    outputTokens: relativeChange(current.outputTokens, previous.outputTokens),
    traceCount: relativeChange(current.traceCount, previous.traceCount),
  };
}

export function emptyTotals(): ReportTotals {
  return { costUsd: 0, inputTokens: 0, outputTokens: 0, traceCount: 0, spanCount: 0 };
}
