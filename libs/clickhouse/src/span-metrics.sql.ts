/*
 * The span-metrics rollup (infra/clickhouse/012_span_metrics.sql), as SQL shared by the worker's
 * sealer (libs/ingest span-metrics.sealer.ts), which writes span_metrics_minute, and the readers
 * (libs/query metrics.repository.ts, stats.repository.ts), which add the minutes not sealed yet
 * straight from span_facts: both aggregate span_facts rows with the same expressions.
 */

/** The DDSketch of durations and TTFTs: relative accuracy 0.5 %, and the levels kept. */
export const SPAN_SKETCH = 'quantilesDD(0.005, 0.5, 0.95, 0.99)';
/** 1-based positions of the levels in a merged sketch's array. */
export const SKETCH_LEVEL = { p50: 1, p95: 2, p99: 3 } as const;

/** The rollup's dimension columns, in its sort-key order. */
export const SPAN_METRIC_DIMENSIONS = ['model', 'provider', 'span_type', 'service_name', 'name'] as const;

/**
 * span_facts rows (read with FINAL) aggregated into span_metrics_minute's figure columns, in the
 * table's column order after the dimensions.
 */
export const SPAN_FACT_AGGREGATES = aggregatesOf('span_facts');

/**
 * The aggregates over a span_facts table reference. Source columns are qualified: the output
 * aliases (cost_usd, input_tokens…) would otherwise shadow the columns of the same name.
 */
function aggregatesOf(f: string): string {
  return `count() AS spans, sum(${f}.is_error) AS errors, sum(${f}.owns_usage) AS usage_spans,
  sum(${f}.unpriced * ${f}.owns_usage) AS unpriced, sum(${f}.cost_usd * ${f}.owns_usage) AS cost_usd,
  sum(${f}.input_tokens * ${f}.owns_usage) AS input_tokens, sum(${f}.output_tokens * ${f}.owns_usage) AS output_tokens,
  sum(${f}.duration_ms) AS duration_sum_ms,
  sumIf(greatest(${f}.duration_ms / 1e3 - ifNull(${f}.ttft_ms, 0) / 1e3, 0), ${f}.owns_usage = 1) AS generation_seconds,
  sumIf(${f}.output_tokens, ${f}.owns_usage = 1) AS usage_output_tokens,
  ${SPAN_SKETCH.replace('(', 'State(')}(${f}.duration_ms) AS duration_sketch, countIf(isNotNull(${f}.ttft_ms)) AS ttft_count,
  ${SPAN_SKETCH.replace('(', 'StateIf(')}(assumeNotNull(${f}.ttft_ms), isNotNull(${f}.ttft_ms)) AS ttft_sketch`;
}

/** Every figure column of span_metrics_minute after the dimensions, as the readers select them. */
export const SPAN_METRIC_FIGURES = [
  'spans',
  'errors',
  'usage_spans',
  'unpriced',
  'cost_usd',
  'input_tokens',
  'output_tokens',
  'duration_sum_ms',
  'generation_seconds',
  'usage_output_tokens',
  'duration_sketch',
  'ttft_count',
  'ttft_sketch',
] as const;

/**
 * A computation vouches for the span rows stored this long before it ran: an insert stamps its
 * rows when it starts and they become visible when it ends, so a row stamped just before the
 * computation may not have been read. A minute written since (dirty_at after computed_at) is
 * read from span_facts until sealed again.
 */
export const SEAL_SAFETY_SECONDS = 60;

/**
 * The minutes of a project's span_facts in {sealFromMs, sealToMs} (ms since the epoch) whose newest computation does not
 * cover what they hold: no computation yet, or span rows written since. Bound to the reader's
 * tenant and project.
 */
export const UNSEALED_MINUTES_SQL = `
  SELECT m.minute FROM span_minute_marks AS m FINAL
  LEFT JOIN (SELECT minute, max(computed_at) AS computed_at FROM span_metrics_minute
             WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND minute >= fromUnixTimestamp64Milli({sealFromMs:Int64}, 'UTC') AND minute < fromUnixTimestamp64Milli({sealToMs:Int64}, 'UTC')
             GROUP BY minute) AS b ON m.minute = b.minute
  WHERE m.tenant_id = {tenantId:String} AND m.project_id = {projectId:String} AND m.minute >= fromUnixTimestamp64Milli({sealFromMs:Int64}, 'UTC') AND m.minute < fromUnixTimestamp64Milli({sealToMs:Int64}, 'UTC')
    AND b.computed_at < m.dirty_at`;

/** The rows of each minute's newest computation in {sealFromMs, sealToMs}, the unsealed minutes left out. */
export const SEALED_ROWS_SQL = `
  SELECT * FROM span_metrics_minute FINAL
  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND minute >= fromUnixTimestamp64Milli({sealFromMs:Int64}, 'UTC') AND minute < fromUnixTimestamp64Milli({sealToMs:Int64}, 'UTC')
    AND (minute, computed_at) IN (SELECT minute, max(computed_at) FROM span_metrics_minute
                                  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String} AND minute >= fromUnixTimestamp64Milli({sealFromMs:Int64}, 'UTC') AND minute < fromUnixTimestamp64Milli({sealToMs:Int64}, 'UTC')
                                  GROUP BY minute)
    AND minute NOT IN (${UNSEALED_MINUTES_SQL})`;
