-- Score configs can be changed (bounds, categories) and archived. An archived config no longer
-- checks values, and its name may be given a new config: only one live config per name.
ALTER TABLE score_configs ADD COLUMN IF NOT EXISTS archived_at timestamptz;
ALTER TABLE score_configs DROP CONSTRAINT IF EXISTS score_configs_project_id_name_key;
CREATE UNIQUE INDEX IF NOT EXISTS score_configs_live_name ON score_configs (project_id, name) WHERE archived_at IS NULL;
