-- A minmax index on the traces rollup's start time. The worker's upkeep reads the rows of a round's
-- traces (their figures, whether their root becomes RUN) by day and trace id; the ids are random,
-- so within a day that touches every granule. Bounded also by the time those traces cover (from
-- trace_index), the read skips the granules whose traces all started before: under steady ingest,
-- the big merged parts of the day's older traces. Parts written before this index have none until
-- they are merged or the index is materialized below (in the background); until then they are read
-- as before. docs/architecture.md, "Upkeep loop".
ALTER TABLE traces ADD INDEX IF NOT EXISTS idx_start_time start_time TYPE minmax GRANULARITY 1;

ALTER TABLE traces MATERIALIZE INDEX idx_start_time;
