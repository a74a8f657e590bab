-- Erasure requests (eraseData), the record of who asked to erase what and when, and each one's
-- progress. The traces a request names are kept in ClickHouse (erased_traces, by job id): a user's
-- traces may be many. A job is PENDING until a worker claims it (RUNNING, started_at), COMPLETED
-- once no table holds a row of its traces; a worker that dies leaves it RUNNING, and another
-- claims it again after a while (every step is idempotent).
CREATE TABLE IF NOT EXISTS erasure_jobs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  -- 'admin', or 'key:<api key id>': who asked.
  requested_by text NOT NULL,
  -- What was asked for (any of the three), and how many traces it named when asked.
  user_id text,
  session_id text,
  trace_ids text[] NOT NULL DEFAULT '{}',
  trace_count integer NOT NULL,
  status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'RUNNING', 'COMPLETED')),
  requested_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  completed_at timestamptz,
  -- Why the last attempt failed (it is tried again); NULL once completed.
  last_error text
);

CREATE INDEX IF NOT EXISTS erasure_jobs_open_idx ON erasure_jobs (requested_at) WHERE status <> 'COMPLETED';
CREATE INDEX IF NOT EXISTS erasure_jobs_project_idx ON erasure_jobs (project_id, requested_at DESC);
