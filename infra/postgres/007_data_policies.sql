-- A project's data policy (capture modes, redaction, retention), as validated by libs/policy:
-- one JSON document per project; a project without a row keeps everything and redacts nothing.
CREATE TABLE IF NOT EXISTS data_policies (
  project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  policy jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
