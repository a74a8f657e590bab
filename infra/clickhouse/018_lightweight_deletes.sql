-- Deletes (erasure, and the retention sweep of rows stored before a retention) as lightweight
-- updates: a DELETE writes a small patch part that masks the rows at once, instead of a mutation of
-- every part of the table, which the engine schedules only when it has no merge to do (tens of
-- seconds to minutes on a table of many partitions) and which a synchronous statement waits for.
-- Patch parts need each row's block number and offset stored; parts written before this read them
-- from their names and positions. Reads apply pending patches until merges have applied them.
ALTER TABLE spans MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE span_log_events MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE span_facts MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE span_minute_marks MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE span_metrics_minute MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE span_metrics_hour MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE traces MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE trace_index MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE sessions MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE runs MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE trace_figures MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE session_figures MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE trace_cost_days MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE cost_daily MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE feedback MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
ALTER TABLE dead_letters MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
