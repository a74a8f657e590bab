-- The per-trace figure tables merge column by column too, as 028 made spans: every merge that
-- writes a wide part (from 10 MiB uncompressed, the engine's min_bytes_for_wide_part; smaller
-- parts are written compact and merged all at once), not only those of 131,072 rows and more.
-- A merge of all columns at once holds a block of every column of every part it reads. In an
-- hour's soak their merges of 7-8 parts held 127-146 MiB (the engine's count), among the hour's
-- largest once spans merged column by column. In a probe, 7 parts of 13,207 rows each took
-- 80-82 MiB to merge that way and 46-50 MiB column by column, in no more CPU. docs/scaling.md,
-- "Memory of the all-in-one".
ALTER TABLE trace_figures MODIFY SETTING vertical_merge_algorithm_min_rows_to_activate = 1;
ALTER TABLE trace_minutes MODIFY SETTING vertical_merge_algorithm_min_rows_to_activate = 1;
