-- Per-project ingest limits (NULL = the gateway's defaults) and project price overrides.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS ingest_spans_per_second integer CHECK (ingest_spans_per_second IS NULL OR ingest_spans_per_second > 0);
ALTER TABLE projects ADD COLUMN IF NOT EXISTS ingest_bytes_per_second bigint CHECK (ingest_bytes_per_second IS NULL OR ingest_bytes_per_second > 0);

-- A project's own price for a model (negotiated rates, fine-tunes); wins over the bundled table
-- from effective_from on. Prices in USD per million tokens.
CREATE TABLE IF NOT EXISTS model_price_overrides (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  model text NOT NULL CHECK (length(model) BETWEEN 1 AND 200),
  input_per_mtok double precision NOT NULL CHECK (input_per_mtok >= 0),
  output_per_mtok double precision NOT NULL CHECK (output_per_mtok >= 0),
  cache_read_per_mtok double precision CHECK (cache_read_per_mtok >= 0),
  cache_write_per_mtok double precision CHECK (cache_write_per_mtok >= 0),
  effective_from timestamptz NOT NULL DEFAULT '1970-01-01',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, model, effective_from)
);
