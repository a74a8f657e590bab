-- How many values the project's data policy redacted in each span (its detectors and patterns);
-- 0 for spans stored without a policy.
ALTER TABLE spans ADD COLUMN IF NOT EXISTS redactions UInt32 DEFAULT 0 CODEC(ZSTD(1));
