-- A worker that stores spans of a trace erased before (a late span, or spans it read back before the
-- erasure) runs the erasure's job again to delete them: a COMPLETED job goes back to PENDING. A job
-- RUNNING at that moment may have deleted before those spans were stored, so it is marked `rerun`:
-- its run ends in PENDING instead of COMPLETED, and it runs once more.
ALTER TABLE erasure_jobs ADD COLUMN IF NOT EXISTS rerun boolean NOT NULL DEFAULT false;
