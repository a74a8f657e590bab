import path from 'node:path';
import { projectRoot } from '@spanforge/config';
import { workerDataDir } from '@spanforge/testing';
import { createClickHouseClient, type ClickHouseClient } from './clickhouse.client';
import { splitStatements } from './cluster-ddl';
import { migrateClickHouse, readClickHouseMigrations } from './migrator';
import { renderMigrations } from './print-migrations.cli';

const dir = path.join(projectRoot(), 'infra', 'clickhouse');

describe('ClickHouse migrations (embedded chDB)', () => {
  let client: ClickHouseClient;

  beforeAll(() => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
  });
  afterAll(() => client.close());

  it('are recorded once and re-running them changes nothing', async () => {
    const files = await readClickHouseMigrations(dir);
    await migrateClickHouse(client, dir);
    const again = await migrateClickHouse(client, dir);
    expect(again).toEqual({ applied: [], alreadyApplied: files.length });
    const rows = await (await client.query({ query: 'SELECT version, count() AS n FROM schema_migrations FINAL GROUP BY version ORDER BY version', format: 'JSONEachRow' })).json<{ version: number; n: string }>();
    expect(rows.map((r) => Number(r.version))).toEqual(files.map((f) => f.version));
    expect(rows.every((r) => Number(r.n) === 1)).toBe(true);
  });

  it('survive being run again statement by statement (idempotent DDL)', async () => {
    for (const migration of await readClickHouseMigrations(dir)) {
      for (const statement of migration.statements) await client.command({ query: statement });
    }
  });

  /** The engine's own parser checks the printed cluster form (`npm run migrations:print -- --cluster NAME`). */
  it.each([[undefined], ['analytics']])('print a form the engine parses (cluster %s)', async (cluster) => {
    const printed = splitStatements(renderMigrations(dir, cluster));
    expect(printed.length).toBeGreaterThan(0);
    for (const { sql } of printed) {
      const result = await client.query({ query: 'SELECT formatQuery({sql:String}) AS formatted', query_params: { sql }, format: 'JSONEachRow' });
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
