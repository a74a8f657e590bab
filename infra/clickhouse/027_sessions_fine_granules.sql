-- The sessions rollup in granules of at most 64 KiB. The worker's upkeep reads the rollup rows of a
-- round's sessions by session id (their figures, and the traces their feedback is matched through).
-- A session's row carries the usage of each of its spans, a few KiB, so a granule of the default
-- size (up to 10 MiB, ~1,600 sessions) is read whole for one session; session ids are random, so a
-- round of 25 sessions read most of a 50,000-session project (10M spans: ~45 ms of the statement's
-- ~60). With 64 KiB granules it reads about one small granule per session (~14 ms, measured on the
-- same data). The granule size of a table cannot be changed in place, so the table is rebuilt as
-- 013 rebuilt feedback: copied into a staging table of the new form, then exchanged.
--
-- Each step may run again: a start interrupted anywhere completes on the next start. The rows of
-- a staging table left by an interrupted run are first copied into `sessions` (after the exchange
-- the staging table is the old one, and may hold rows an old process wrote during the copy; before
-- it, they are copies of rows `sessions` holds, and collapse), then it is dropped. The
-- materialized view `sessions_mv` writes to the table named `sessions`, so after the exchange it
-- fills the new one. In the cluster form, a run interrupted after the exchange cannot be run again
-- whole: the dropped staging table's replication path is the live table's; an operator runs the
-- statements after the exchange. docs/architecture.md, "Upkeep loop".

-- shard by: cityHash64(session_id)
CREATE TABLE IF NOT EXISTS sessions_027 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  session_id String,
  first_seen SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
  last_seen SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
  user_id SimpleAggregateFunction(max, String),
  trace_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  error_span_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  usage SimpleAggregateFunction(maxMap, Tuple(Array(String), Array(Float64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64))),
  retention_days UInt16 DEFAULT 0
)
ENGINE = AggregatingMergeTree
PARTITION BY if(retention_days = 0, toYYYYMM(first_seen), toYYYYMMDD(toMonday(toDate(first_seen) + retention_days)))
ORDER BY (tenant_id, project_id, session_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(first_seen, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1, index_granularity_bytes = 65536, enable_block_number_column = 1, enable_block_offset_column = 1;

INSERT INTO sessions (tenant_id, project_id, session_id, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage, retention_days)
SELECT tenant_id, project_id, session_id, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage, retention_days
FROM sessions_027;

DROP TABLE IF EXISTS sessions_027;

-- shard by: cityHash64(session_id)
CREATE TABLE IF NOT EXISTS sessions_027 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  session_id String,
  first_seen SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
  last_seen SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
  user_id SimpleAggregateFunction(max, String),
  trace_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  error_span_ids SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  usage SimpleAggregateFunction(maxMap, Tuple(Array(String), Array(Float64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64), Array(UInt64))),
  retention_days UInt16 DEFAULT 0
)
ENGINE = AggregatingMergeTree
PARTITION BY if(retention_days = 0, toYYYYMM(first_seen), toYYYYMMDD(toMonday(toDate(first_seen) + retention_days)))
ORDER BY (tenant_id, project_id, session_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(first_seen, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1, index_granularity_bytes = 65536, enable_block_number_column = 1, enable_block_offset_column = 1;

INSERT INTO sessions_027 (tenant_id, project_id, session_id, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage, retention_days)
SELECT tenant_id, project_id, session_id, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage, retention_days
FROM sessions;

EXCHANGE TABLES sessions AND sessions_027;

-- Rows the old table got while the copy ran (from a process of the old version still storing
-- spans) come over too. The table keeps no version to pick them by, so every row is copied again:
-- each column is an aggregate that a repeated row leaves as it is (min, max, a union of ids, the
-- usage per span id), and merges fold the copies together.
INSERT INTO sessions (tenant_id, project_id, session_id, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage, retention_days)
SELECT tenant_id, project_id, session_id, first_seen, last_seen, user_id, trace_ids, error_span_ids, usage, retention_days
FROM sessions_027;

DROP TABLE IF EXISTS sessions_027;
