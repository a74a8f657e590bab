-- Scheduled cost reports (issue 5). A schedule fires on its cron in its timezone; each firing
-- produces the report of [fire − window, fire). UNIQUE (schedule_id, window_end) makes "exactly one
-- report per schedule and window" hold across restarts and several workers: the second insert of
-- a window finds the row and delivers nothing new.
CREATE TABLE IF NOT EXISTS cost_report_schedules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  cron text NOT NULL,
  timezone text NOT NULL,
  window_iso text NOT NULL,
  window_ms bigint NOT NULL CHECK (window_ms > 0),
  group_by text[] NOT NULL,
  webhook_url text NOT NULL,
  include_feedback boolean NOT NULL DEFAULT false,
  -- HMAC key of the webhook signature; shown once at creation, like an API key secret.
  signing_secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);

CREATE INDEX IF NOT EXISTS cost_report_schedules_project_idx ON cost_report_schedules (project_id) WHERE deleted_at IS NULL;

CREATE TABLE IF NOT EXISTS cost_reports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  schedule_id uuid REFERENCES cost_report_schedules (id) ON DELETE SET NULL,
  window_start timestamptz NOT NULL,
  window_end timestamptz NOT NULL,
  report jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivery_status text NOT NULL DEFAULT 'pending' CHECK (delivery_status IN ('pending', 'delivered', 'failed', 'not_requested')),
  delivery_attempts integer NOT NULL DEFAULT 0,
  last_delivery_error text,
  delivered_at timestamptz,
  UNIQUE (schedule_id, window_end)
);

CREATE INDEX IF NOT EXISTS cost_reports_project_idx ON cost_reports (project_id, created_at DESC);
