-- The per-trace figure tables merge column by column too, whatever their size, as 028 made spans.
-- Below 131,072 rows the engine merges all columns at once and holds a block of every column of
-- every part it reads. In an hour's soak their merges of 7-8 fresh parts held 127-146 MiB (the
-- engine's count), among the hour's largest once spans merged column by column. In a probe, 7
-- parts of 13,207 rows each took 80-82 MiB to merge that way and 46-50 MiB column by column, in no
-- more CPU. docs/scaling.md, "Memory of the all-in-one".
ALTER TABLE trace_figures MODIFY SETTING vertical_merge_algorithm_min_rows_to_activate = 1;
ALTER TABLE trace_minutes MODIFY SETTING vertical_merge_algorithm_min_rows_to_activate = 1;
