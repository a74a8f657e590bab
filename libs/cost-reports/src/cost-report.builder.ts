import { randomUUID } from 'node:crypto';
import type { ClickHouseClient, FairScheduler } from '@spanforge/clickhouse';
import type { QueryLimits } from '@spanforge/config';
import {
  AnalyticsRepository,
  ReportRepository,
  ScopedClickHouse,
  isoOf,
  sessionScores,
  usd,
  type CostDimension,
  type KeptSince,
} from '@spanforge/query';
import { computeChange, type CostReport, type ReportTotals } from '@spanforge/reports';

export interface ReportRequest {
  tenantId: string;
  projectId: string;
  projectName: string;
  scheduleId: string | null;
  window: { start: Date; end: Date };
  timezone: string;
  groupBy: CostDimension[];
  includeFeedback: boolean;
}

const TOP = 10;

function totals(row: {
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
  trace_count: number;
  span_count: number;
}): ReportTotals {
  return {
    costUsd: usd(row.cost_usd),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    traceCount: Number(row.trace_count),
    spanCount: Number(row.span_count),
  };
}

/**
 * A cost report of one window, from the same figures the query API serves: totals and the change
 * against the window of equal length just before, the breakdown by the chosen dimensions, the most
 * expensive sessions (with their feedback when asked) and traces.
 *
 * `limits` are the operator's query limits, `scheduler` the process's statement turns, and
 * `keptSince` the project's retention: a report is the project's own read, taking its turn with
 * the API's projects and seeing what they see.
 */
export async function buildCostReport(
  clickhouse: ClickHouseClient,
  request: ReportRequest,
  reads: { limits?: QueryLimits; scheduler?: FairScheduler; keptSince?: KeptSince } = {},
): Promise<CostReport> {
  const scope = { tenantId: request.tenantId, projectId: request.projectId };
  const db = new ScopedClickHouse(clickhouse, scope, reads.limits, reads.scheduler, reads.keptSince);
  const reports = new ReportRepository(db);
  const analytics = new AnalyticsRepository(db);
  const from = request.window.start.getTime();
  const to = request.window.end.getTime();
  const range = { from: request.window.start, to: request.window.end };
  const [current, previous, breakdown, sessions, traces] = await Promise.all([
    reports.totals(from, to),
    reports.totals(from - (to - from), from),
    analytics.costBreakdown(request.groupBy, range),
    analytics.sessions(range, TOP, undefined, false),
    reports.topTraces(from, to, TOP),
  ]);
  const currentTotals = totals(current);
  const previousTotals = totals(previous);
  return {
    id: randomUUID(),
    projectId: request.projectId,
    projectName: request.projectName,
    scheduleId: request.scheduleId,
    windowStart: request.window.start.toISOString(),
    windowEnd: request.window.end.toISOString(),
    timezone: request.timezone,
    generatedAt: new Date().toISOString(),
    totals: currentTotals,
    previousTotals,
    change: computeChange(currentTotals, previousTotals),
    groupBy: request.groupBy,
    breakdown: breakdown.map((r) => ({
      keys: r.keys,
      costUsd: usd(r.cost_usd),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      spanCount: Number(r.span_count),
    })),
    topSessions: sessions.rows.slice(0, TOP).map((s) => ({
      sessionId: s.session_id,
      costUsd: usd(s.cost_usd),
      traceCount: Number(s.trace_count),
      feedback: request.includeFeedback ? sessionScores(s) : [],
    })),
    topTraces: traces.map((t) => ({
      traceId: t.trace_id,
      rootName: t.root_name || null,
      costUsd: usd(t.cost_usd),
      durationMs: Number(t.duration_ms),
      startTime: isoOf(t.start_time),
    })),
    includeFeedback: request.includeFeedback,
  };
}
