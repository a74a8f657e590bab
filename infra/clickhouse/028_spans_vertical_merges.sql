-- Every merge of span parts column by column ("vertical"), not only those of 131,072 rows and more
-- (the engine's default threshold). A merge of all columns at once keeps a block of every column of
-- every part it reads in memory, and spans carry prompts and completions of kilobytes: merging 10
-- parts of 2,000 rows up to 8 of 16,000 that way held 90-314 MiB in a probe, column by column
-- 44-126 MiB, for 1.1-2.2 times the CPU. docs/scaling.md, "Memory of the all-in-one".
ALTER TABLE spans MODIFY SETTING vertical_merge_algorithm_min_rows_to_activate = 1;
