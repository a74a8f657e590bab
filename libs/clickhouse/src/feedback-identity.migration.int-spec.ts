import path from 'node:path';
import { projectRoot } from '@spanforge/config';
import { workerDataDir } from '@spanforge/testing';
import { createClickHouseClient, type ClickHouseClient } from './clickhouse.client';
import { migrateClickHouse, readClickHouseMigrations } from './migrator';

const dir = path.join(projectRoot(), 'infra', 'clickhouse');
/** How long re-running the migrations from 016 on may take over what earlier test files stored. */
const REBUILD_TIMEOUT_MS = 300_000;
const T1 = 'a'.repeat(32);
const T2 = 'b'.repeat(32);

interface OldRow {
  project_id: string;
  trace_id: string;
  id: string;
  name: string;
  value_number: number;
  received_at: string;
}

/**
 * 013 rebuilds `feedback` with a score's key holding its name and no monthly partitions, carrying
 * the rows over as every read showed them (FINAL of the table 006 made).
 */
describe('ClickHouse migration 013 (feedback score identity)', () => {
  let client: ClickHouseClient;
  const tenant = `tenant-013-${Date.now()}`;

  const rows = async <T>(query: string) => (await client.query({ query, query_params: { tenant }, format: 'JSONEachRow' })).json<T>();
  const stored = () =>
    rows<{ project_id: string; trace_id: string; id: string; name: string; value_number: number; received_at: string }>(
      `SELECT project_id, trace_id, id, name, value_number, received_at FROM feedback FINAL
       WHERE tenant_id = {tenant:String} ORDER BY project_id, trace_id, id, name`,
    );

  /**
   * The directory as it was before 013: `feedback` as 006 made it, holding the rows it held and
   * `old` (written as the old writer did: received_at the arrival of each copy), 013 not recorded.
   */
  async function before013(old: OldRow[]): Promise<void> {
    const migrations = await readClickHouseMigrations(dir);
    const createdBy006 = migrations.find((m) => m.version === 6)!.statements.find((s) => /CREATE TABLE IF NOT EXISTS feedback\b/.test(s))!;
    await client.command({ query: 'DROP TABLE IF EXISTS feedback_kept' });
    await client.command({ query: 'RENAME TABLE feedback TO feedback_kept' });
    await client.command({ query: createdBy006 });
    await client.command({
      query: `INSERT INTO feedback (tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at)
              SELECT tenant_id, project_id, trace_id, id, span_id, name, data_type, value_number, value_text, comment, source, received_at FROM feedback_kept`,
    });
    await client.command({ query: 'DROP TABLE feedback_kept' });
    await client.command({ query: 'DELETE FROM schema_migrations WHERE version = 13' });
    // One insert per row: each copy in its own part, as separate requests wrote them.
    for (const row of old) {
      await client.insert({
        table: 'feedback',
        values: [
          { tenant_id: tenant, span_id: '', data_type: 'NUMERIC', value_text: String(row.value_number), comment: '', source: '', ...row },
        ],
        format: 'JSONEachRow',
      });
    }
  }

  /** Score x re-sent a month later; z sent for another name with the same id (006's key replaced it); x again in another project. */
  const OLD: OldRow[] = [
    { project_id: 'p1', trace_id: T1, id: 'x', name: 'helpfulness', value_number: 3, received_at: '2026-09-10 08:00:00.000' },
    { project_id: 'p1', trace_id: T1, id: 'x', name: 'helpfulness', value_number: 5, received_at: '2026-10-10 08:00:00.000' },
    { project_id: 'p1', trace_id: T1, id: 'y', name: 'accuracy', value_number: 1, received_at: '2026-09-11 08:00:00.000' },
    { project_id: 'p1', trace_id: T2, id: 'z', name: 'tone', value_number: 2, received_at: '2026-09-12 08:00:00.000' },
    { project_id: 'p1', trace_id: T2, id: 'z', name: 'thumbs', value_number: 1, received_at: '2026-09-13 08:00:00.000' },
    { project_id: 'p2', trace_id: T1, id: 'x', name: 'accuracy', value_number: 4, received_at: '2026-09-14 08:00:00.000' },
  ];
  /** What every read showed before 013, and shows after: the newest copy of each (trace, id). */
  const SHOWN = [OLD[1]!, OLD[2]!, OLD[4]!, OLD[5]!].map(({ project_id, trace_id, id, name, value_number, received_at }) => ({
    project_id,
    trace_id,
    id,
    name,
    value_number,
    received_at,
  }));

  beforeAll(async () => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
    await migrateClickHouse(client, dir);
  });
  afterAll(async () => {
    // 013 ran again over the feedback table 016 had rebuilt: 016 and every migration after it run
    // again, so the directory leaves with today's schema (later test files in this worker write
    // retention_days, and delete as patch parts, which 018 enables on 016's tables). They rebuild
    // and back-fill whatever the test files before this one left in the worker's directory, so
    // their time grows with that (67 s in one CI run once 022 back-filled three more tables).
    await client.command({ query: 'DELETE FROM schema_migrations WHERE version >= 16' });
    // 016 rebuilds the day filing of 008, which 024 dropped and a directory before 016 still had.
    const [eight] = (await readClickHouseMigrations(dir)).filter((m) => m.version === 8);
    await client.command({ query: eight!.statements[0]! });
    await migrateClickHouse(client, dir);
    await client.close();
  }, REBUILD_TIMEOUT_MS);

  it('carries every score over as reads showed it, into one partition where copies merge', async () => {
    await before013(OLD);
    expect(await stored()).toEqual(SHOWN);
    const result = await migrateClickHouse(client, dir);
    expect(result.applied).toEqual(['013_feedback_score_identity']);
    expect(await stored()).toEqual(SHOWN);
    const [table] = await rows<{ partition_key: string; sorting_key: string }>(
      "SELECT partition_key, sorting_key FROM system.tables WHERE database = currentDatabase() AND name = 'feedback'",
    );
    expect(table).toEqual({ partition_key: '', sorting_key: 'tenant_id, project_id, trace_id, name, id' });
    expect(await rows("SELECT name FROM system.tables WHERE database = currentDatabase() AND name = 'feedback_013'")).toEqual([]);

    // A copy of x sent in yet another month, as the writer stores it now: same partition, merged away.
    await client.insert({
      table: 'feedback',
      values: [
        {
          ...OLD[1],
          tenant_id: tenant,
          span_id: '',
          data_type: 'NUMERIC',
          value_number: 6,
          value_text: '6',
          comment: '',
          source: '',
          updated_at: '2026-12-01 08:00:00.000',
        },
      ],
      format: 'JSONEachRow',
    });
    await client.command({ query: 'OPTIMIZE TABLE feedback FINAL' });
    const copies = await rows<{ n: string }>(
      "SELECT count() AS n FROM feedback WHERE tenant_id = {tenant:String} AND project_id = 'p1' AND id = 'x'",
    );
    expect(Number(copies[0]!.n)).toBe(1);
    expect((await stored()).find((r) => r.project_id === 'p1' && r.id === 'x')).toEqual({ ...SHOWN[0], value_number: 6 });
  });

  it.each([
    ['after the copy', 3],
    ['after the exchange', 4],
    ['after the copy back', 6],
  ])('completes a run interrupted %s on the next start', async (_, done) => {
    await before013(OLD);
    const [migration] = (await readClickHouseMigrations(dir)).filter((m) => m.version === 13);
    for (const statement of migration!.statements.slice(0, done)) await client.command({ query: statement });
    expect(await migrateClickHouse(client, dir)).toEqual({ applied: ['013_feedback_score_identity'], alreadyApplied: expect.any(Number) });
    expect(await stored()).toEqual(SHOWN);
    const [table] = await rows<{ sorting_key: string }>(
      "SELECT sorting_key FROM system.tables WHERE database = currentDatabase() AND name = 'feedback'",
    );
    expect(table!.sorting_key).toBe('tenant_id, project_id, trace_id, name, id');
  });
});
