-- What a key may do (INGEST: send spans and feedback; READ: query the project's data; MANAGE: the
-- project's configuration), and when it stops working. Keys made before scopes existed keep all
-- three, as a key created without scopes does.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS scopes text[] NOT NULL DEFAULT ARRAY['INGEST', 'READ', 'MANAGE'];
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS expires_at timestamptz;
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_scopes_known;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_known CHECK (scopes <@ ARRAY['INGEST', 'READ', 'MANAGE'] AND cardinality(scopes) > 0);
