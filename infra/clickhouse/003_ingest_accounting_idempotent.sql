-- Accounting rows carry the id of the export (or gateway flush) they come from, so a job retried
-- after a crash rewrites its own rows instead of adding to them: read with FINAL and sum().
-- Outcomes: received, accepted, rejected (reason = why), rate_limited, refused (reason = status).
-- Replaces 001's SummingMergeTree table, which double counted retried jobs.
-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS ingest_accounting (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
  outcome LowCardinality(String),
  reason LowCardinality(String),
  batch_id String,
  requests UInt64,
  spans UInt64,
  bytes UInt64
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(minute)
ORDER BY (tenant_id, project_id, minute, outcome, reason, batch_id)
TTL minute + INTERVAL 400 DAY;

DROP TABLE IF EXISTS ingest_accounting_per_minute;
