import { splitStatements, tableNames, toClusterStatements } from './cluster-ddl';

const FILE = `-- Spans, sharded by trace so one trace stays on one shard.
-- shard by: cityHash64(trace_id)
CREATE TABLE IF NOT EXISTS spans (
  trace_id String,
  value UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY trace_id;

CREATE TABLE IF NOT EXISTS totals (
  trace_id String,
  total UInt64
)
ENGINE = SummingMergeTree((total))
ORDER BY trace_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS totals_mv TO totals AS
SELECT trace_id, sum(value) AS total FROM spans GROUP BY trace_id;

ALTER TABLE spans ADD COLUMN IF NOT EXISTS extra String;
ALTER TABLE spans ADD INDEX IF NOT EXISTS idx_extra extra TYPE bloom_filter GRANULARITY 4;
`;

describe('cluster DDL', () => {
  const statements = splitStatements(FILE);
  const tables = tableNames(statements);

  it('splits a file into statements with their comments', () => {
    expect(statements).toHaveLength(5);
    expect(statements[0]!.comments).toEqual([
      '-- Spans, sharded by trace so one trace stays on one shard.',
      '-- shard by: cityHash64(trace_id)',
    ]);
    expect([...tables]).toEqual(['spans', 'totals']);
  });

  it('makes a replicated local table and a Distributed table of the same name', () => {
    const [local, distributed] = toClusterStatements(statements[0]!, tables, { cluster: 'prod' });
    expect(local).toContain('CREATE TABLE IF NOT EXISTS spans_local ON CLUSTER prod (');
    expect(local).toContain(
      "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/spans_local', '{replica}', version)",
    );
    expect(local).toContain('ORDER BY trace_id');
    expect(distributed).toBe(
      'CREATE TABLE IF NOT EXISTS spans ON CLUSTER prod AS spans_local ENGINE = Distributed(prod, currentDatabase(), spans_local, cityHash64(trace_id))',
    );
  });

  it('keeps nested engine arguments and defaults the shard key to rand()', () => {
    const [local, distributed] = toClusterStatements(statements[1]!, tables, { cluster: 'c' });
    expect(local).toContain("ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/{database}/totals_local', '{replica}', (total))");
    expect(distributed).toContain('Distributed(c, currentDatabase(), totals_local, rand())');
  });

  it('points materialized views at the shard-local tables', () => {
    const [mv] = toClusterStatements(statements[2]!, tables, { cluster: 'c' });
    expect(mv).toContain('CREATE MATERIALIZED VIEW IF NOT EXISTS totals_mv ON CLUSTER c TO totals_local');
    expect(mv).toContain('FROM spans_local');
  });

  it('alters columns on both layers and indexes only where the data is', () => {
    expect(toClusterStatements(statements[3]!, tables, { cluster: 'c' })).toEqual([
      'ALTER TABLE spans_local ON CLUSTER c ADD COLUMN IF NOT EXISTS extra String',
      'ALTER TABLE spans ON CLUSTER c ADD COLUMN IF NOT EXISTS extra String',
    ]);
    expect(toClusterStatements(statements[4]!, tables, { cluster: 'c' })).toEqual([
      'ALTER TABLE spans_local ON CLUSTER c ADD INDEX IF NOT EXISTS idx_extra extra TYPE bloom_filter GRANULARITY 4',
    ]);
  });

  it('drops the Distributed table and its local table, whose replication path it frees at once', () => {
    expect(toClusterStatements({ sql: 'DROP TABLE IF EXISTS totals', comments: [] }, tables, { cluster: 'c' })).toEqual([
      'DROP TABLE IF EXISTS totals ON CLUSTER c',
      'DROP TABLE IF EXISTS totals_local ON CLUSTER c SYNC',
    ]);
  });

  it('runs a back-fill through the Distributed tables, once', () => {
    const backfill = 'INSERT INTO totals (id, n) SELECT id, n FROM spans FINAL';
    expect(toClusterStatements({ sql: backfill, comments: [] }, tables, { cluster: 'c' })).toEqual([backfill]);
  });

  it('exchanges the shard-local tables, under the Distributed tables that keep their names', () => {
    expect(toClusterStatements({ sql: 'EXCHANGE TABLES spans AND totals', comments: [] }, tables, { cluster: 'c' })).toEqual([
      'EXCHANGE TABLES spans_local AND totals_local ON CLUSTER c',
    ]);
  });

  it('refuses a statement it has no cluster form for', () => {
    expect(() => toClusterStatements({ sql: 'TRUNCATE TABLE spans', comments: [] }, tables, { cluster: 'c' })).toThrow(/no cluster form/);
  });
});
