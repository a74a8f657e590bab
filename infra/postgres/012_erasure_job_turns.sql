-- Erasure jobs take turns between projects, and a failing one waits before it is tried again, so
-- one project's jobs (many requests, a job that keeps failing, one run again and again for late
-- spans) never hold up another project's. `due_at`: when the job may next be claimed (when it was
-- asked, ran again, or failed plus a back-off); `failures`: its attempts that failed since it last
-- completed, from which the back-off doubles.
ALTER TABLE erasure_jobs ADD COLUMN IF NOT EXISTS due_at timestamptz;
UPDATE erasure_jobs SET due_at = requested_at WHERE due_at IS NULL;
ALTER TABLE erasure_jobs ALTER COLUMN due_at SET DEFAULT now();
ALTER TABLE erasure_jobs ALTER COLUMN due_at SET NOT NULL;
ALTER TABLE erasure_jobs ADD COLUMN IF NOT EXISTS failures integer NOT NULL DEFAULT 0;

-- The claim ranks each project's open jobs: running ones first, then by due_at.
CREATE INDEX IF NOT EXISTS erasure_jobs_turns_idx ON erasure_jobs (project_id, due_at) WHERE status <> 'COMPLETED';
