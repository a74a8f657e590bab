import type { ScopedClickHouse } from './scoped-clickhouse';
import { parseInstant } from './query.values';
import { timeRange, traceFilterSql, type TraceFilter } from './trace-filter';

export interface SpanTypeStatsRow {
  span_type: string;
  span_count: number;
  error_rate: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
}

export interface ModelStatsRow {
  model: string;
  provider: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  unpriced_calls: number;
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
  output_tokens_per_second: number | null;
}

export interface IngestMinuteRow {
  minute: string;
  outcome: string;
  reason: string;
  spans: number;
  requests: number;
}

/** Span time-range conditions (start within [from, to)) with bound parameters. */
function spanRange(filter: Pick<TraceFilter, 'from' | 'to'> | undefined): { where: string; params: Record<string, unknown> } {
  const conditions: string[] = [];
  const params: Record<string, unknown> = {};
  const { from, to } = timeRange(filter);
  if (from !== undefined) {
    params.fromMs = from;
    conditions.push("start_time >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC')");
  }
  if (to !== undefined) {
    params.toMs = to;
    conditions.push("start_time < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')");
  }
  return { where: conditions.map((c) => ` AND ${c}`).join(''), params };
}

/**
 * Span conditions for a trace filter: spans that start within [from, to), and when the filter says
 * more than the time range, only spans of the traces the rest of it matches (from trace_figures).
 */
export function spanConditions(filter: TraceFilter | undefined): { where: string; params: Record<string, unknown> } {
  const range = spanRange(filter);
  // The range is on the spans; the rest of the filter picks traces, whenever they started.
  const traces = traceFilterSql(filter, { traceStartInRange: false });
  if (!traces.traces) return range;
  return {
    where: `${range.where} AND trace_id IN (SELECT trace_id FROM (SELECT * FROM trace_figures FINAL WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String})${traces.traces})`,
    params: { ...traces.params, ...range.params },
  };
}

/** SQL behind spanTypeStats, modelStats and ingestStats. */
export class StatsRepository {
  constructor(private readonly db: ScopedClickHouse) {}

  async spanTypeStats(filter: TraceFilter | undefined): Promise<SpanTypeStatsRow[]> {
    const range = spanConditions(filter);
    return this.db.rows<SpanTypeStatsRow>(
      'query.span_type_stats',
      `SELECT toString(span_type) AS span_type, count() AS span_count, countIf(status_code = 'ERROR') / count() AS error_rate,
              quantileExactInclusive(0.5)(duration_ns / 1e6) AS p50_ms, quantileExactInclusive(0.95)(duration_ns / 1e6) AS p95_ms,
              quantileExactInclusive(0.99)(duration_ns / 1e6) AS p99_ms
       FROM spans FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}${range.where}
       GROUP BY span_type ORDER BY span_count DESC, span_type`,
      range.params,
    );
  }

  /**
   * Per model, the LLM calls that own their usage. Output tokens/s is over generation time: the
   * call's duration after its first token (the whole duration when no TTFT was recorded).
   */
  async modelStats(filter: TraceFilter | undefined): Promise<ModelStatsRow[]> {
    // Columns are qualified where an output alias of the same name would otherwise shadow them.
    const range = spanConditions(filter);
    return this.db.rows<ModelStatsRow>(
      'query.model_stats',
      `SELECT toString(model) AS model, any(toString(provider)) AS provider, count() AS calls, sum(input_tokens) AS input_tokens,
              sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd, countIf(cost_source = 'none') AS unpriced_calls,
              if(countIf(isNotNull(ttft_ms)) = 0, NULL, quantileExactInclusiveIf(0.5)(assumeNotNull(ttft_ms), isNotNull(ttft_ms))) AS ttft_p50_ms,
              if(countIf(isNotNull(ttft_ms)) = 0, NULL, quantileExactInclusiveIf(0.95)(assumeNotNull(ttft_ms), isNotNull(ttft_ms))) AS ttft_p95_ms,
              if(sum(greatest(duration_ns / 1e9 - ifNull(ttft_ms, 0) / 1e3, 0)) = 0, NULL,
                 sum(spans.output_tokens) / sum(greatest(duration_ns / 1e9 - ifNull(ttft_ms, 0) / 1e3, 0))) AS output_tokens_per_second
       FROM spans FINAL
       WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND span_type = 'LLM' AND usage_is_aggregate = 0 AND model != ''${range.where}
       GROUP BY model ORDER BY cost_usd DESC, model`,
      range.params,
    );
  }

  async ingestMinutes(filter: Pick<TraceFilter, 'from' | 'to'> | undefined): Promise<IngestMinuteRow[]> {
    const from = parseInstant(filter?.from, 'filter.from');
    const to = parseInstant(filter?.to, 'filter.to');
    const params: Record<string, unknown> = {};
    let where = '';
    if (from !== undefined) {
      params.fromMs = from;
      where += " AND minute >= toStartOfMinute(fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC'))";
    }
    if (to !== undefined) {
      params.toMs = to;
      where += " AND minute < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')";
    }
    // The range applies to the stored minute, in a subquery: the output's text \`minute\` would shadow it.
    return this.db.rows<IngestMinuteRow>(
      'query.ingest_minutes',
      `SELECT toString(at) AS minute, outcome, reason, sum(spans) AS spans, sum(requests) AS requests
       FROM (SELECT minute AS at, outcome, reason, spans, requests FROM ingest_accounting FINAL
             WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}${where})
       GROUP BY at, outcome, reason ORDER BY at, outcome, reason
       LIMIT 100000`,
      params,
    );
  }
}
