-- The span metrics hour rollup without the span name, for every read that does not group by name
-- (the metrics query's SPANS view without NAME, spanTypeStats, modelStats). Span names can have
-- many values (a name per tool, per route, per id), and each (hour, name) row of span_metrics_hour
-- carries its own DDSketch states: merging them is what a month's dashboard panel spends its time
-- on (22,176 hour rows for 721 hours of the 10M-span bench project, 10,013 of them names; 6,483
-- without them).
--
-- The worker's sealer writes it right after span_metrics_hour, from the same minute rows grouped
-- without the name, as a computation of its own: the same columns, so readers pick each hour's
-- newest computation and decide whether it is current exactly as for span_metrics_hour. The sealer
-- takes an hour as merged once this table has it, so an hour whose first insert succeeded and
-- second did not is merged again. docs/architecture.md, "Span metrics rollup".

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_metrics_hour_coarse (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  hour DateTime64(0, 'UTC'),
  model LowCardinality(String),
  provider LowCardinality(String),
  span_type LowCardinality(String),
  service_name LowCardinality(String),
  spans UInt64,
  errors UInt64,
  usage_spans UInt64,
  unpriced UInt64,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  duration_sum_ms Float64,
  generation_seconds Float64,
  usage_output_tokens UInt64,
  duration_sketch AggregateFunction(quantilesDD(0.005, 0.5, 0.95, 0.99), Float64),
  ttft_count UInt64,
  ttft_sketch AggregateFunction(quantilesDD(0.005, 0.5, 0.95, 0.99), Float64),
  source_computed_at DateTime64(6, 'UTC'),
  min_source_computed_at DateTime64(6, 'UTC'),
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(hour), toYYYYMMDD(toMonday(toDate(hour) + retention_days)))
ORDER BY (tenant_id, project_id, hour, model, provider, span_type, service_name)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(hour, 'UTC') + toIntervalDay(retention_days) + toIntervalHour(1))
SETTINGS ttl_only_drop_parts = 1, enable_block_number_column = 1, enable_block_offset_column = 1;

-- The hours merged already: each hour's newest computation in span_metrics_hour, summed over the
-- names under its own computed_at (a copy made twice has the same version and collapses).
INSERT INTO span_metrics_hour_coarse (tenant_id, project_id, hour, model, provider, span_type, service_name, spans, errors, usage_spans, unpriced,
  cost_usd, input_tokens, output_tokens, duration_sum_ms, generation_seconds, usage_output_tokens, duration_sketch, ttft_count, ttft_sketch,
  source_computed_at, min_source_computed_at, computed_at, retention_days)
SELECT tenant_id, project_id, hour, model, provider, span_type, service_name, sum(spans), sum(errors), sum(usage_spans), sum(unpriced), sum(cost_usd),
  sum(input_tokens), sum(output_tokens), sum(duration_sum_ms), sum(generation_seconds), sum(usage_output_tokens),
  quantilesDDMergeState(0.005, 0.5, 0.95, 0.99)(duration_sketch), sum(ttft_count), quantilesDDMergeState(0.005, 0.5, 0.95, 0.99)(ttft_sketch),
  max(source_computed_at), min(min_source_computed_at), computed_at, max(retention_days)
FROM span_metrics_hour
WHERE (tenant_id, project_id, hour, computed_at) IN (SELECT tenant_id, project_id, hour, max(computed_at) FROM span_metrics_hour
                                                     GROUP BY tenant_id, project_id, hour)
GROUP BY tenant_id, project_id, hour, computed_at, model, provider, span_type, service_name
SETTINGS max_partitions_per_insert_block = 0;
