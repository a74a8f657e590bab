-- A cost report past its project's retention (data_policies.policy->retentionDays, by the start of
-- its window) loses its content but keeps its row: UNIQUE (schedule_id, window_end) is what makes
-- each window's report exactly once, and the newest window_end is where a schedule goes on from.
-- The worker's retention sweep sets expired_at and empties `report`; reads skip expired rows.
ALTER TABLE cost_reports ADD COLUMN IF NOT EXISTS expired_at timestamptz;
