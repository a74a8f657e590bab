import path from 'node:path';
import { projectRoot } from '@spanforge/config';
import { workerDataDir } from '@spanforge/testing';
import { createClickHouseClient, type ClickHouseClient } from './clickhouse.client';
import { splitStatements } from './cluster-ddl';
import { migrateClickHouse, readClickHouseMigrations } from './migrator';
import { renderMigrations } from './print-migrations.cli';

const dir = path.join(projectRoot(), 'infra', 'clickhouse');

/**
 * The first migration that can run over today's schema: 016–018 rebuild or alter trace_cost_days,
 * which 024 dropped, and those before 016 ran over older schemas.
 */
const RERUNNABLE_FROM = 19;

// The migrations run again over this worker's one chDB directory (a process binds one), with
// whatever the test files before this one stored: rebuilds and back-fills take time that grows
// with that. test/support/test-sequencer.mjs runs this file first (7 s alone; 206 s when it ran
// late in CI); the long timeout covers a run where it does not come first.
jest.setTimeout(300_000);

describe('ClickHouse migrations (embedded chDB)', () => {
  let client: ClickHouseClient;

  beforeAll(() => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
  });
  afterAll(() => client.close());

  /** A table's CREATE statement as the engine keeps it, settings included. */
  const definitionOf = async (table: string) => {
    const [found] = await (
      await client.query({
        query: 'SELECT create_table_query FROM system.tables WHERE database = currentDatabase() AND name = {table:String}',
        query_params: { table },
        format: 'JSONEachRow',
      })
    ).json<{ create_table_query: string }>();
    return found?.create_table_query;
  };

  it('are recorded once and re-running them changes nothing', async () => {
    const files = await readClickHouseMigrations(dir);
    await migrateClickHouse(client, dir);
    const again = await migrateClickHouse(client, dir);
    expect(again).toEqual({ applied: [], alreadyApplied: files.length });
    const rows = await (
      await client.query({
        query: 'SELECT version, count() AS n FROM schema_migrations FINAL GROUP BY version ORDER BY version',
        format: 'JSONEachRow',
      })
    ).json<{ version: number; n: string }>();
    expect(rows.map((r) => Number(r.version))).toEqual(files.map((f) => f.version));
    expect(rows.every((r) => Number(r.n) === 1)).toBe(true);
  });

  it.each(['spans', 'trace_figures', 'trace_minutes'])(
    'merge %s parts column by column from the smallest wide part, not only from 131,072 rows (a merge of all columns at once holds a block of each)',
    async (table) => {
      await migrateClickHouse(client, dir);
      expect(await definitionOf(table)).toMatch(/\bvertical_merge_algorithm_min_rows_to_activate = 1\b/);
    },
  );

  it('keep traces parts compact (one file of all columns) up to 16 GiB, where the engine writes a wide part from 10 MiB', async () => {
    await migrateClickHouse(client, dir);
    // A copy takes traces' definition, settings included, and leaves traces itself to the other tests.
    const copy = `traces_part_type_${process.pid}`;
    await client.command({ query: `CREATE TABLE ${copy} AS traces` });
    try {
      expect(await definitionOf(copy)).toMatch(/\bmin_bytes_for_wide_part = 17179869184\b/);
      // Two parts of about 14 MiB uncompressed each, and their merge of about 28 MiB; no merge before it.
      await client.command({ query: `SYSTEM STOP MERGES ${copy}` });
      for (const half of [0, 1]) {
        await client.command({
          query: `INSERT INTO ${copy} (tenant_id, project_id, day, trace_id, root_name)
                  SELECT 't', 'p', today(), toString(number * 2 + ${half}), repeat('n', 80) FROM numbers(150000)`,
        });
      }
      const parts = async () =>
        (
          await client.query({
            query: `SELECT part_type, data_uncompressed_bytes AS bytes FROM system.parts
                    WHERE database = currentDatabase() AND table = {copy:String} AND active`,
            query_params: { copy },
            format: 'JSONEachRow',
          })
        ).json<{ part_type: string; bytes: string }>();
      const inserted = await parts();
      await client.command({ query: `SYSTEM START MERGES ${copy}` });
      await client.command({ query: `OPTIMIZE TABLE ${copy} FINAL` });
      const [merged, ...more] = await parts();
      expect(more).toEqual([]);
      const tenMiB = 10 * 1024 * 1024;
      expect(inserted.map((part) => Number(part.bytes) > tenMiB)).toEqual([true, true]);
      expect(Number(merged!.bytes)).toBeGreaterThan(2 * tenMiB);
      expect([...inserted, merged].map((part) => part!.part_type)).toEqual(['Compact', 'Compact', 'Compact']);
    } finally {
      await client.command({ query: `DROP TABLE IF EXISTS ${copy}` });
    }
  });

  /**
   * What a start interrupted half way through a migration does: it runs that migration again from
   * its first statement. Only the newest migrations can be run over today's schema: an older one's
   * back-fill names the columns of its time (012's span_facts back-fill lists no columns, and 016
   * added one), and a directory that recorded it never runs it again.
   */
  it('survive being run again statement by statement, leaving the same schema (idempotent)', async () => {
    await migrateClickHouse(client, dir);
    const schema = async () =>
      (
        await (
          await client.query({
            query:
              "SELECT name, create_table_query FROM system.tables WHERE database = currentDatabase() AND name NOT LIKE '.inner%' ORDER BY name",
            format: 'JSONEachRow',
          })
        ).json<{ name: string; create_table_query: string }>()
      ).map((t) => `${t.name}: ${t.create_table_query.replace(/UUID '[^']*' ?/g, '')}`);
    const before = await schema();
    for (const migration of (await readClickHouseMigrations(dir)).filter((m) => m.version >= RERUNNABLE_FROM)) {
      for (let run = 0; run < 2; run++) for (const statement of migration.statements) await client.command({ query: statement });
    }
    expect(await schema()).toEqual(before);
  });

  it("bring a directory that applied 008's first text (5d9240b) in line, instead of refusing to start", async () => {
    await migrateClickHouse(client, dir);
    // That directory as it was: 008 recorded with its first text, and its view writing a row for every day a trace spans.
    // 009's view is the one 016 made again with retention_days: 016 is run again after it, as it would be then,
    // and the migrations after 016 with it (018 sets what 016's rebuilt tables lose).
    await client.command({ query: 'DELETE FROM schema_migrations WHERE version IN (8, 9) OR version >= 16' });
    await client.insert({
      table: 'schema_migrations',
      // sha256 of `git show 5d9240b:infra/clickhouse/008_trace_cost_days.sql`
      values: [{ version: 8, name: '008_trace_cost_days', checksum: '01af9055ab3888afccba83bd9657b758ffea13f6694fe391af5ef90239b783fd' }],
      format: 'JSONEachRow',
    });
    await client.command({ query: 'DROP TABLE IF EXISTS trace_cost_days_mv' });
    // 024 retired the day filing; that directory still had 008's table.
    const [eight] = (await readClickHouseMigrations(dir)).filter((m) => m.version === 8);
    await client.command({ query: eight!.statements[0]! });
    await client.command({
      query: `CREATE MATERIALIZED VIEW trace_cost_days_mv TO trace_cost_days AS
              SELECT tenant_id, project_id, toDate(start_time) + offset AS day, trace_id, if(offset = 0, cost_rows, []) AS cost_rows, computed_at
              FROM trace_figures ARRAY JOIN range(toUInt32(least(dateDiff('day', toDate(start_time), toDate(end_time)), 366) + 1)) AS offset`,
    });
    const view = async () =>
      (
        await (
          await client.query({
            query: "SELECT create_table_query AS q FROM system.tables WHERE name = 'trace_cost_days_mv'",
            format: 'JSONEachRow',
          })
        ).json<{ q: string }>()
      )[0]?.q;
    expect(await view()).toContain('ARRAY JOIN');
    const result = await migrateClickHouse(client, dir);
    const since016 = (await readClickHouseMigrations(dir)).filter((m) => m.version >= 16).map((m) => m.name);
    expect(since016.slice(0, 3)).toEqual(['016_retention_partitions', '017_erased_traces', '018_lightweight_deletes']);
    expect(result.applied).toEqual(['009_trace_cost_days_view', ...since016]);
    // 009 replaced the view and 024 retired the day filing altogether: neither the view nor its table is left.
    expect(await view()).toBeUndefined();
    const left = await (
      await client.query({
        query:
          "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('trace_cost_days', 'trace_hours', 'trace_hours_mv')",
        format: 'JSONEachRow',
      })
    ).json<{ name: string }>();
    expect(left).toEqual([]);
    expect(await migrateClickHouse(client, dir)).toEqual({ applied: [], alreadyApplied: (await readClickHouseMigrations(dir)).length });
  });

  it("start a directory that applied 028's corrected comment (c843913), which was put back to its first text", async () => {
    await migrateClickHouse(client, dir);
    await client.command({ query: 'DELETE FROM schema_migrations WHERE version = 28' });
    await client.insert({
      table: 'schema_migrations',
      // sha256 of `git show c843913:infra/clickhouse/028_spans_vertical_merges.sql`
      values: [
        { version: 28, name: '028_spans_vertical_merges', checksum: '28a1887a711cde440632e4f44a555cf6deee3517a49cd2caa743917a9b77bfcb' },
      ],
      format: 'JSONEachRow',
    });
    const files = await readClickHouseMigrations(dir);
    expect(await migrateClickHouse(client, dir)).toEqual({ applied: [], alreadyApplied: files.length });
  });

  it('refuse a migration changed after it was applied', async () => {
    await migrateClickHouse(client, dir);
    await client.command({ query: 'DELETE FROM schema_migrations WHERE version = 7' });
    await client.insert({
      table: 'schema_migrations',
      values: [{ version: 7, name: '007_cost_daily', checksum: 'f'.repeat(64) }],
      format: 'JSONEachRow',
    });
    await expect(migrateClickHouse(client, dir)).rejects.toThrow(
      'ClickHouse migration 007_cost_daily changed after it was applied; add a new migration instead',
    );
    const [seven] = (await readClickHouseMigrations(dir)).filter((m) => m.version === 7);
    await client.command({ query: 'DELETE FROM schema_migrations WHERE version = 7' });
    await client.insert({
      table: 'schema_migrations',
      values: [{ version: 7, name: seven!.name, checksum: seven!.checksum }],
      format: 'JSONEachRow',
    });
  });

  /** The engine's own parser checks the printed cluster form (`npm run migrations:print -- --cluster NAME`). */
  it.each([[undefined], ['analytics']])('print a form the engine parses (cluster %s)', async (cluster) => {
    const printed = splitStatements(renderMigrations(dir, cluster));
    expect(printed.length).toBeGreaterThan(0);
    for (const { sql } of printed) {
      const result = await client.query({
        query: 'SELECT formatQuery({sql:String}) AS formatted',
        query_params: { sql },
        format: 'JSONEachRow',
      });
      const [{ formatted }] = await result.json<{ formatted: string }>();
      expect(formatted.length).toBeGreaterThan(0);
      // DDL runs on every node; a back-fill (INSERT … SELECT) runs once, through the Distributed tables.
      if (cluster && !/^INSERT INTO/.test(formatted)) expect(formatted).toContain(`ON CLUSTER ${cluster}`);
    }
    if (cluster) {
      const text = printed.map((s) => s.sql).join('\n');
      expect(text).toMatch(/ENGINE = Replicated\w*MergeTree\('\/clickhouse\/tables\/\{shard\}/);
      expect(text).toMatch(/ENGINE = Distributed\(analytics, currentDatabase\(\)/);
    }
  });
});
