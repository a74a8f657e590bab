import type { ScopedClickHouse } from './scoped-clickhouse';
import { parseInstant } from './query.values';
import { sketch, spanFigureRows } from './span-figures';
import type { TraceFilter } from './trace-filter';

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

/** SQL behind spanTypeStats, modelStats and ingestStats. */
export class StatsRepository {
  constructor(private readonly db: ScopedClickHouse) {}

  /** Per span type, of the spans that start in the range, of the traces the filter matches (span-figures.ts). */
  async spanTypeStats(filter: TraceFilter | undefined): Promise<SpanTypeStatsRow[]> {
    const rows = await spanFigureRows(this.db, filter ?? {});
    return this.db.rows<SpanTypeStatsRow>(
      'query.span_type_stats',
      `SELECT toString(span_type) AS span_type, sum(spans) AS span_count, sum(errors) / sum(spans) AS error_rate,
              ${sketch('duration', 'p50')} AS p50_ms, ${sketch('duration', 'p95')} AS p95_ms, ${sketch('duration', 'p99')} AS p99_ms
       FROM (${rows.sql})
       GROUP BY span_type ORDER BY span_count DESC, span_type`,
      rows.params,
    );
  }

  /**
   * Per model, the LLM calls that own their usage. Output tokens/s is over generation time: the
   * call's duration after its first token (the whole duration when no TTFT was recorded). TTFT
   * percentiles are over the model's LLM spans that recorded one.
   */
  async modelStats(filter: TraceFilter | undefined): Promise<ModelStatsRow[]> {
    const rows = await spanFigureRows(this.db, filter ?? {});
    return this.db.rows<ModelStatsRow>(
      'query.model_stats',
      `SELECT toString(model) AS model, any(toString(provider)) AS provider, sum(usage_spans) AS calls, sum(input_tokens) AS input_tokens,
              sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd, sum(unpriced) AS unpriced_calls,
              if(sum(ttft_count) = 0, NULL, ${sketch('ttft', 'p50')}) AS ttft_p50_ms, if(sum(ttft_count) = 0, NULL, ${sketch('ttft', 'p95')}) AS ttft_p95_ms,
              if(sum(generation_seconds) = 0, NULL, sum(usage_output_tokens) / sum(generation_seconds)) AS output_tokens_per_second
       FROM (${rows.sql})
       WHERE span_type = 'LLM' AND model != ''
       GROUP BY model HAVING calls > 0 ORDER BY cost_usd DESC, model`,
      rows.params,
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
