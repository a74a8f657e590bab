-- Score configs: a project's definition of a feedback name (its type and allowed values). Values
-- that break a config are refused. Names without a config accept any value of a valid type.
CREATE TABLE IF NOT EXISTS score_configs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  data_type text NOT NULL CHECK (data_type IN ('NUMERIC', 'BOOLEAN', 'CATEGORICAL', 'TEXT')),
  min_value double precision,
  max_value double precision,
  categories text[],
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);
