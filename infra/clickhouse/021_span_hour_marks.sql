-- When each hour last received span rows: span_minute_marks (012) per hour, written by a view on it
-- (so also when the erasure job marks minutes). Every read of the span metrics first asks which
-- whole hours of its range have hour rows that stand for all their minutes; it compared each
-- hour's newest hour merge with its minutes' marks, 43,200 rows for a month of a busy project, and
-- now with 720. ReplacingMergeTree(dirty_at): the newest mark of an hour stays; readers take max().

-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS span_hour_marks (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  hour DateTime64(0, 'UTC'),
  dirty_at DateTime64(3, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(dirty_at)
PARTITION BY if(retention_days = 0, toYYYYMM(hour), toYYYYMMDD(toMonday(toDate(hour) + retention_days)))
ORDER BY (tenant_id, project_id, hour)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(hour, 'UTC') + toIntervalDay(retention_days) + toIntervalHour(1))
SETTINGS ttl_only_drop_parts = 1, enable_block_number_column = 1, enable_block_offset_column = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_hour_marks_mv TO span_hour_marks AS
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(minute), 3600000) * 3600, 0, 'UTC') AS hour, retention_days,
  max(dirty_at) AS dirty_at
FROM span_minute_marks
GROUP BY tenant_id, project_id, hour, retention_days;

-- The marks stored already (a mark written meanwhile comes through the view; the newest stays).
INSERT INTO span_hour_marks (tenant_id, project_id, hour, retention_days, dirty_at)
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(minute), 3600000) * 3600, 0, 'UTC') AS hour, retention_days, max(dirty_at)
FROM span_minute_marks
GROUP BY tenant_id, project_id, hour, retention_days
SETTINGS max_partitions_per_insert_block = 0;
