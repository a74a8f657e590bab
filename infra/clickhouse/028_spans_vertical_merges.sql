-- Every merge of span parts column by column ("vertical"), not only those of 131,072 rows and more
-- (the engine's default threshold). A merge of all columns at once keeps a block of every column of
-- every part it reads in memory; spans carry prompts and completions of kilobytes, so merges of
-- small parts (the most frequent under load) held 220-310 MiB each (20 parts of 5,000 rows, 8 of
-- 16,000), against 95-130 MiB column by column, in about the same time. docs/scaling.md,
-- "Memory of the all-in-one".
ALTER TABLE spans MODIFY SETTING vertical_merge_algorithm_min_rows_to_activate = 1;
