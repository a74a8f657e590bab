-- What happened to every export, per project per minute: received, accepted, rejected (by reason),
-- rate-limited. Counters sum on merge; read with sum() and GROUP BY.
-- shard by: cityHash64(project_id)
CREATE TABLE IF NOT EXISTS ingest_accounting_per_minute (
  tenant_id LowCardinality(String),
  project_id LowCardinality(String),
  minute DateTime('UTC') CODEC(DoubleDelta, ZSTD(1)),
  outcome LowCardinality(String),
  reason LowCardinality(String),
  requests UInt64,
  spans UInt64,
  bytes UInt64
)
ENGINE = SummingMergeTree((requests, spans, bytes))
PARTITION BY toYYYYMM(minute)
ORDER BY (tenant_id, project_id, minute, outcome, reason)
TTL minute + INTERVAL 400 DAY;
