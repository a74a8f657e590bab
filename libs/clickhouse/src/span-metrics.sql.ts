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

/**
 * One level of SPAN_SKETCH: over raw values (`combinator` ''), or over sketch states ('Merge').
 * Every percentile of the metrics query and the span statistics is read this way.
 */
export function sketchPercentile(combinator: '' | 'Merge', argument: string, level: keyof typeof SKETCH_LEVEL): string {
  return `arrayElement(${SPAN_SKETCH.replace('(', `${combinator}(`)}(${argument}), ${SKETCH_LEVEL[level]})`;
}

/** The rollup's dimension columns, in its sort-key order. */
export const SPAN_METRIC_DIMENSIONS = ['model', 'provider', 'span_type', 'service_name', 'name'] as const;

const f = 'span_facts';

/**
 * span_facts rows (read with FINAL) aggregated into span_metrics_minute's figure columns, in the
 * table's column order after the dimensions. TTFT counts only spans that own their usage: a
 * wrapper's stated time to first chunk repeats its calls', as its tokens do. Source columns are qualified: the output aliases
 * (cost_usd, input_tokens…) would otherwise shadow the columns of the same name.
 */
export const SPAN_FACT_AGGREGATES = `count() AS spans, sum(${f}.is_error) AS errors, sum(${f}.owns_usage) AS usage_spans,
  sum(${f}.unpriced * ${f}.owns_usage) AS unpriced, sum(${f}.cost_usd * ${f}.owns_usage) AS cost_usd,
  sum(${f}.input_tokens * ${f}.owns_usage) AS input_tokens, sum(${f}.output_tokens * ${f}.owns_usage) AS output_tokens,
  sum(${f}.duration_ms) AS duration_sum_ms,
  sumIf(greatest(${f}.duration_ms / 1e3 - ifNull(${f}.ttft_ms, 0) / 1e3, 0), ${f}.owns_usage = 1) AS generation_seconds,
  sumIf(${f}.output_tokens, ${f}.owns_usage = 1) AS usage_output_tokens,
  ${SPAN_SKETCH.replace('(', 'State(')}(${f}.duration_ms) AS duration_sketch,
  countIf(isNotNull(${f}.ttft_ms) AND ${f}.owns_usage = 1) AS ttft_count,
  ${SPAN_SKETCH.replace('(', 'StateIf(')}(assumeNotNull(${f}.ttft_ms), isNotNull(${f}.ttft_ms) AND ${f}.owns_usage = 1) AS ttft_sketch`;

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

/** The hour (DateTime64(0)) a DateTime64 column falls in; toStartOfHour would return a DateTime, which ends in 2106. */
export function hourOf(column: string): string {
  return `toDateTime64(intDiv(toUnixTimestamp64Milli(${column}), 3600000) * 3600, 0, 'UTC')`;
}

export const HOUR_OF_MINUTE = hourOf('minute');

/** A condition on a minute column (the column's name is given: `minute`, `m.minute`). */
export type MinuteCondition = (column: string) => string;

const SCOPE = 'tenant_id = {tenantId:String} AND project_id = {projectId:String}';

/**
 * The project's minutes (those the condition picks) whose newest computation does not cover what
 * they hold: no computation yet, or span rows written since (their mark is newer).
 */
export function unsealedMinutesSql(minutes: MinuteCondition): string {
  return `
  SELECT m.minute FROM span_minute_marks AS m FINAL
  LEFT JOIN (SELECT minute, max(computed_at) AS computed_at FROM span_metrics_minute WHERE ${SCOPE} AND ${minutes('minute')} GROUP BY minute) AS b
    ON m.minute = b.minute
  WHERE m.tenant_id = {tenantId:String} AND m.project_id = {projectId:String} AND ${minutes('m.minute')} AND b.computed_at < m.dirty_at`;
}

/**
 * The rows of each picked minute's newest computation, the unsealed minutes left out. No FINAL:
 * rows of one computation share computed_at, and no computation is inserted twice (a failed seal
 * is done again as a new computation).
 */
export function sealedMinuteRowsSql(minutes: MinuteCondition): string {
  return `
  SELECT * FROM span_metrics_minute
  WHERE ${SCOPE} AND ${minutes('minute')}
    AND (minute, computed_at) IN (SELECT minute, max(computed_at) FROM span_metrics_minute WHERE ${SCOPE} AND ${minutes('minute')} GROUP BY minute)
    AND minute NOT IN (${unsealedMinutesSql(minutes)})`;
}

/**
 * The two hour rollups: span_metrics_hour (012) by model, provider, span type, service and span
 * name, and span_metrics_hour_coarse (020), the same without the name, written from it by a view
 * under the same computations. A read that does not group by name reads the coarse one: far fewer
 * sketch states to merge when names are many.
 */
export type SpanHourTable = 'span_metrics_hour' | 'span_metrics_hour_coarse';

/**
 * The whole hours in {hourFromMs, hourToMs} (ms) that hold span rows (their marks, per hour in
 * span_hour_marks), each with
 * whether its hour rows (in `table`) stand for all its minutes: the oldest minute computation
 * their newest merge took (each group's row keeps the oldest of its minutes; the merges are told
 * apart by computed_at in one read) is at least as new as the newest span row of the hour.
 * Answers `hour_ms` and `current` (1 or 0).
 */
export function hoursWithDataSql(table: SpanHourTable): string {
  return `
  SELECT toUnixTimestamp64Milli(d.hour) AS hour_ms, h.vouched >= d.dirty AS current
  FROM (SELECT hour, max(dirty_at) AS dirty FROM span_hour_marks
        WHERE ${SCOPE} AND hour >= fromUnixTimestamp64Milli({hourFromMs:Int64}, 'UTC') AND hour < fromUnixTimestamp64Milli({hourToMs:Int64}, 'UTC')
        GROUP BY hour) AS d
  LEFT JOIN (SELECT hour, argMax(oldest, computed_at) AS vouched
             FROM (SELECT hour, computed_at, min(min_source_computed_at) AS oldest FROM ${table}
                   WHERE ${SCOPE} AND hour >= fromUnixTimestamp64Milli({hourFromMs:Int64}, 'UTC') AND hour < fromUnixTimestamp64Milli({hourToMs:Int64}, 'UTC')
                   GROUP BY hour, computed_at)
             GROUP BY hour) AS h ON d.hour = h.hour`;
}

export const HOURS_WITH_DATA_SQL = hoursWithDataSql('span_metrics_hour');
export const COARSE_HOURS_WITH_DATA_SQL = hoursWithDataSql('span_metrics_hour_coarse');

const HOUR_RANGE =
  "hour >= fromUnixTimestamp64Milli({hourFromMs:Int64}, 'UTC') AND hour < fromUnixTimestamp64Milli({hourToMs:Int64}, 'UTC')";

/**
 * The rows of each listed hour's ({currentHoursMs}, within {hourFromMs, hourToMs}) newest
 * computation in `table` (no FINAL: the rows of one computation share computed_at; in the coarse
 * table a group may come as several rows of one computation, which readers sum like any other).
 */
export function currentHourRowsSql(table: SpanHourTable): string {
  return `
  SELECT * FROM ${table}
  WHERE ${SCOPE} AND ${HOUR_RANGE} AND toUnixTimestamp64Milli(hour) IN {currentHoursMs:Array(Int64)}
    AND (hour, computed_at) IN (SELECT hour, max(computed_at) FROM ${table}
                                WHERE ${SCOPE} AND ${HOUR_RANGE} AND toUnixTimestamp64Milli(hour) IN {currentHoursMs:Array(Int64)}
                                GROUP BY hour)`;
}

export const CURRENT_HOUR_ROWS_SQL = currentHourRowsSql('span_metrics_hour');
export const COARSE_CURRENT_HOUR_ROWS_SQL = currentHourRowsSql('span_metrics_hour_coarse');

/**
 * Figure columns of rollup rows (`row` names them) merged into a coarser period's: sums, and sketch
 * states (columns ending in `_sketch`) merged as states. Qualified, so the aliases do not shadow the
 * columns they sum.
 */
export function mergedFigures(columns: readonly string[], row: string): string {
  return columns
    .map((column) =>
      column.endsWith('_sketch')
        ? `${SPAN_SKETCH.replace('(', 'MergeState(')}(${row}.${column}) AS ${column}`
        : `sum(${row}.${column}) AS ${column}`,
    )
    .join(', ');
}

/** span_metrics_minute figure columns of the rows `r` merged into an hour's. */
export const MINUTE_TO_HOUR_FIGURES = mergedFigures(SPAN_METRIC_FIGURES, 'r');
