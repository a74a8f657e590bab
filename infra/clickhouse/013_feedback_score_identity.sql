-- One score per id, whenever and however often it is sent. 006 kept a score under
-- (tenant, project, trace_id, id) in a partition of the month it was received, with the newest
-- received_at winning: a copy re-sent in a later month sat in another partition, where merges never
-- collapse it, and a score of another name sent with the same id replaced the first. This table
-- keeps a score under (tenant, project, trace_id, name, id) in one partition, so every copy of it
-- meets every other in merges and FINAL, and a score of another name is another row. Its time is
-- received_at, when it was first received (the writer carries it over to a re-send); the newest
-- copy (updated_at) wins. The feedback service refuses an id already used for another trace or
-- name in the project (CONFLICT), so an id names one score.
--
-- The rows are carried over as every read showed them (FINAL: the newest copy of each score),
-- then the tables are exchanged. Each step may run again: a start interrupted anywhere completes
-- on the next start, and running the whole file again rebuilds the same table. A staging table
-- left by an interrupted run is dropped first (`feedback` still holds every row until the
-- exchange).
DROP TABLE IF EXISTS feedback_013;

-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS feedback_013 (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  trace_id String,
  id String,
  span_id String,
  name LowCardinality(String),
  data_type Enum8('NUMERIC' = 1, 'BOOLEAN' = 2, 'CATEGORICAL' = 3, 'TEXT' = 4),
  -- NUMERIC and BOOLEAN (1/0) scores; NULL for CATEGORICAL and TEXT.
  value_number Nullable(Float64),
  -- CATEGORICAL and TEXT scores; the JSON text of the value for the others.
  value_text String CODEC(ZSTD(1)),
  comment String CODEC(ZSTD(3)),
  source LowCardinality(String),
  -- When the score was first received: its time in every answer; a re-send keeps it.
  received_at DateTime64(3, 'UTC') DEFAULT now64(3),
  -- When this copy was received: the newest copy wins (a correction of value, comment, source or span).
  updated_at DateTime64(3, 'UTC') DEFAULT received_at,
  INDEX idx_name name TYPE set(100) GRANULARITY 4,
  -- The writer looks up the ids of each write (which trace and name each already names).
  INDEX idx_id id TYPE bloom_filter(0.01) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (tenant_id, project_id, trace_id, name, id);

-- FINAL merges copies across 006's monthly partitions (their key does not hold the month); said
-- explicitly, so no server default changes what is carried over.
INSERT INTO feedback_013 (tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at, updated_at)
SELECT tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at, received_at
FROM feedback FINAL
SETTINGS do_not_merge_across_partitions_select_final = 0;

EXCHANGE TABLES feedback AND feedback_013;

-- A no-op on one node (the exchanged table has it). In the cluster form the exchange swaps the
-- shard-local tables under the Distributed `feedback`, which gets the new column here.
ALTER TABLE feedback ADD COLUMN IF NOT EXISTS updated_at DateTime64(3, 'UTC') DEFAULT received_at;

-- Scores written to the old table while the copy ran (by a process not restarted yet) come over
-- too; rows already copied are the same rows and collapse.
INSERT INTO feedback (tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at, updated_at)
SELECT tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at, received_at
FROM feedback_013 FINAL
SETTINGS do_not_merge_across_partitions_select_final = 0;

DROP TABLE IF EXISTS feedback_013;
