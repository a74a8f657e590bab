-- A bloom filter index on trace_minutes' trace id. After each round's trace figures refresh, the
-- worker's upkeep reads every minute the round's traces are filed under, within the time each
-- group of them covers (traces whose spans start on one day and end on one day); the table is
-- sorted by minute, then trace id, so for a trace that runs for days (a long agent run whose
-- newest step came in, in a group of its own) that read took every filing of the project in those
-- days, a month's for a run of a month. With the filter, such a group is read in the granules
-- that may hold one of its few ids: for one id, about 1 % of the granules without it (10 bits a
-- row, about 10 KiB of filter per granule of 8,192 filings). A group of hundreds of ids (a round's
-- new traces) gains nothing, and reads its few minutes as before. Parts written before this index
-- have none until they are merged or the index is materialized below (in the background); until
-- then they are read as before. docs/architecture.md, "Groups of like time".
ALTER TABLE trace_minutes ADD INDEX IF NOT EXISTS idx_trace_id trace_id TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE trace_minutes MATERIALIZE INDEX idx_trace_id;
