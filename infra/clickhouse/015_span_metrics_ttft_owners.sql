-- The span metrics' time to first chunk counts only spans that own their usage from now on: a
-- wrapper span's stated TTFT repeats its calls', as its tokens do. Every minute already sealed is
-- marked written again, so the worker's sealer computes it anew with that rule; until it has,
-- readers answer those minutes from span_facts, as they do for any minute written since its seal.
INSERT INTO span_minute_dirt (dirty_at, tenant_id, project_id, minute)
SELECT now64(3), tenant_id, project_id, minute FROM span_minute_marks FINAL;

INSERT INTO span_minute_marks (tenant_id, project_id, minute, dirty_at)
SELECT tenant_id, project_id, minute, now64(3) FROM span_minute_marks FINAL;
