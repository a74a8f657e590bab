-- Session lists over a time range from a filing by last activity. The sessions page of a range
-- read session_figures FINAL, sorted by session id: the whole project for every range, so a
-- dashboard over the last five minutes slowed as the project grew. session_minutes keeps each
-- computation of a session's figures under the UTC minute of its last_seen, sorted by that minute.
-- A session overlaps a range when its last_seen is at or after the range's start (and its
-- first_seen before the end): its newest computation is filed at or after the start's minute, so
-- a range reads the minutes from its start on and keeps each session's newest row among them. A
-- session's last_seen only grows as spans arrive, so its older rows sit in earlier minutes; the
-- erasure, which can make it earlier, deletes the session's rows before computing it again.
-- Rows of one session and minute collapse in merges (newest wins); a session keeps one row per
-- minute it was last active in. docs/architecture.md, "Session lists over a time range".

-- shard by: cityHash64(session_id)
CREATE TABLE IF NOT EXISTS session_minutes (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime64(0, 'UTC'),
  session_id String,
  trace_count UInt32,
  cost_usd Float64,
  input_tokens UInt64,
  output_tokens UInt64,
  first_seen DateTime64(9, 'UTC'),
  last_seen DateTime64(9, 'UTC'),
  user_id String,
  feedback Array(Tuple(name String, count UInt32, sum Float64, numeric UInt32)),
  computed_at DateTime64(6, 'UTC'),
  retention_days UInt16 DEFAULT 0
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY if(retention_days = 0, toYYYYMM(first_seen), toYYYYMMDD(toMonday(toDate(first_seen) + retention_days)))
ORDER BY (tenant_id, project_id, minute, session_id)
TTL if(retention_days = 0, toDateTime('2106-01-01 00:00:00', 'UTC'), toDateTime(first_seen, 'UTC') + toIntervalDay(retention_days))
SETTINGS ttl_only_drop_parts = 1, enable_block_number_column = 1, enable_block_offset_column = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS session_minutes_mv TO session_minutes AS
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(last_seen), 60000) * 60, 0, 'UTC') AS minute, session_id, trace_count,
  cost_usd, input_tokens, output_tokens, first_seen, last_seen, user_id, feedback, computed_at, retention_days
FROM session_figures;

-- Every stored session's newest figures, under the same computed_at (a computation the view filed
-- meanwhile is the same row again, or a newer one).
INSERT INTO session_minutes (tenant_id, project_id, minute, session_id, trace_count, cost_usd, input_tokens, output_tokens, first_seen, last_seen,
  user_id, feedback, computed_at, retention_days)
SELECT tenant_id, project_id, toDateTime64(intDiv(toUnixTimestamp64Milli(last_seen), 60000) * 60, 0, 'UTC'), session_id, trace_count, cost_usd,
  input_tokens, output_tokens, first_seen, last_seen, user_id, feedback, computed_at, retention_days
FROM session_figures FINAL
SETTINGS max_partitions_per_insert_block = 0;
