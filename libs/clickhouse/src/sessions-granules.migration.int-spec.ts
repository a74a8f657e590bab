import path from 'node:path';
import { projectRoot } from '@spanforge/config';
import { workerDataDir } from '@spanforge/testing';
import { createClickHouseClient, type ClickHouseClient } from './clickhouse.client';
import { migrateClickHouse, readClickHouseMigrations } from './migrator';

const dir = path.join(projectRoot(), 'infra', 'clickhouse');
const MIGRATION = '027_sessions_fine_granules';

/** One partial row of the sessions rollup, as its view writes one per insert of spans. */
interface PartialRow {
  session_id: string;
  first_seen: string;
  last_seen: string;
  trace_ids: string[];
  usage: [string[], number[], number[], number[], number[], number[], number[]];
}

/**
 * 027 rebuilds the `sessions` rollup with granules of at most 64 KiB, carrying every row over; the
 * view that fills it writes to the new table afterwards.
 */
describe('ClickHouse migration 027 (sessions in fine granules)', () => {
  let client: ClickHouseClient;
  const tenant = `tenant-027-${Date.now()}`;

  const rows = async <T>(query: string) => (await client.query({ query, query_params: { tenant }, format: 'JSONEachRow' })).json<T>();
  /** What the upkeep reads of each session: its rows merged. */
  const merged = () =>
    rows<{ session_id: string; first_seen: string; last_seen: string; traces: string[]; cost: number }>(
      `SELECT session_id, min(first_seen) AS first_seen, max(last_seen) AS last_seen, arraySort(groupUniqArrayArray(trace_ids)) AS traces,
         arraySum(maxMap(usage).2) AS cost
       FROM sessions WHERE tenant_id = {tenant:String} AND project_id = 'p1' GROUP BY session_id ORDER BY session_id`,
    );
  const tableSql = async () =>
    (
      await rows<{ create_table_query: string }>(
        "SELECT create_table_query FROM system.tables WHERE database = currentDatabase() AND name = 'sessions'",
      )
    )[0]!.create_table_query;

  /** s1 in two inserts (two parts: the first trace, then a second with a span seen again), s2 in one. */
  const OLD: PartialRow[] = [
    {
      session_id: 's1',
      first_seen: '2026-11-20 10:00:00.000000000',
      last_seen: '2026-11-20 10:00:05.000000000',
      trace_ids: ['t1'],
      usage: [['a'], [0.5], [100], [0], [0], [10], [0]],
    },
    {
      session_id: 's1',
      first_seen: '2026-11-20 10:01:00.000000000',
      last_seen: '2026-11-20 10:01:09.000000000',
      trace_ids: ['t2'],
      usage: [
        ['a', 'b'],
        [0.5, 0.25],
        [100, 40],
        [0, 0],
        [0, 0],
        [10, 4],
        [0, 0],
      ],
    },
    {
      session_id: 's2',
      first_seen: '2026-11-21 08:00:00.000000000',
      last_seen: '2026-11-21 08:00:01.000000000',
      trace_ids: ['t3'],
      usage: [['c'], [1], [1], [0], [0], [1], [0]],
    },
  ];
  /** The sessions as the upkeep reads them, from OLD: span a counted once. */
  const SHOWN = [
    {
      session_id: 's1',
      first_seen: '2026-11-20 10:00:00.000000000',
      last_seen: '2026-11-20 10:01:09.000000000',
      traces: ['t1', 't2'],
      cost: 0.75,
    },
    { session_id: 's2', first_seen: '2026-11-21 08:00:00.000000000', last_seen: '2026-11-21 08:00:01.000000000', traces: ['t3'], cost: 1 },
  ];

  /** The directory as it was before 027: `sessions` in 016's form (default granules) holding OLD, 027 not recorded. */
  async function before027(): Promise<void> {
    const migrations = await readClickHouseMigrations(dir);
    const createdBy016 = migrations
      .find((m) => m.version === 16)!
      .statements.find((s) => /CREATE TABLE IF NOT EXISTS sessions_016\b/.test(s))!
      .replace('sessions_016', 'sessions');
    await client.command({ query: 'DROP TABLE IF EXISTS sessions_027' });
    await client.command({ query: 'DROP TABLE IF EXISTS sessions' });
    await client.command({ query: createdBy016 });
    await client.command({ query: 'ALTER TABLE sessions MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1' });
    await client.command({ query: 'DELETE FROM schema_migrations WHERE version = 27' });
    for (const row of OLD) {
      await client.insert({
        table: 'sessions',
        values: [{ tenant_id: tenant, project_id: 'p1', user_id: '', error_span_ids: [], ...row }],
        format: 'JSONEachRow',
      });
    }
  }

  beforeAll(async () => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
    await migrateClickHouse(client, dir);
  });
  afterAll(async () => {
    await client.close();
  });

  it('carries every row over into 64 KiB granules, and the view fills the new table', async () => {
    await before027();
    expect(await merged()).toEqual(SHOWN);
    expect(await tableSql()).not.toContain('index_granularity_bytes = 65536');
    expect((await migrateClickHouse(client, dir)).applied).toEqual([MIGRATION]);
    expect(await merged()).toEqual(SHOWN);
    expect(await tableSql()).toContain('index_granularity_bytes = 65536');
    expect(await rows("SELECT name FROM system.tables WHERE database = currentDatabase() AND name = 'sessions_027'")).toEqual([]);

    // A span of s2 stored after the migration reaches the rebuilt table through sessions_mv.
    await client.insert({
      table: 'spans',
      values: [
        {
          tenant_id: tenant,
          project_id: 'p1',
          trace_id: 't4',
          span_id: 'd',
          session_id: 's2',
          start_time: '2026-11-21 08:05:00.000000000',
          end_time: '2026-11-21 08:05:02.000000000',
          cost_usd: 2,
        },
      ],
      format: 'JSONEachRow',
    });
    expect((await merged())[1]).toEqual({ ...SHOWN[1], last_seen: '2026-11-21 08:05:02.000000000', traces: ['t3', 't4'], cost: 3 });
  });

  /** A session an old process stored while the migration ran, into whichever table it then wrote to. */
  const LATE: PartialRow = {
    session_id: 's3',
    first_seen: '2026-11-22 09:00:00.000000000',
    last_seen: '2026-11-22 09:00:02.000000000',
    trace_ids: ['t5'],
    usage: [['e'], [0.125], [5], [0], [0], [5], [0]],
  };
  const LATE_SHOWN = { session_id: 's3', first_seen: LATE.first_seen, last_seen: LATE.last_seen, traces: ['t5'], cost: 0.125 };

  it.each([
    // Statements: 0-2 carry over and drop a staging table left behind, 3 creates it, 4 copies, 5 exchanges, 6 copies back, 7 drops.
    ['after the copy, a row written since to the old table', 5, 'sessions'],
    ['after the exchange, a row written during the copy to the old table', 6, 'sessions_027'],
    ['after the copy back', 7, undefined],
  ])('completes a run interrupted %s on the next start', async (_, done, oldTable) => {
    await before027();
    const [migration] = (await readClickHouseMigrations(dir)).filter((m) => m.version === 27);
    expect(migration!.statements).toHaveLength(8);
    for (const statement of migration!.statements.slice(0, done)) await client.command({ query: statement });
    if (oldTable) {
      await client.insert({
        table: oldTable,
        values: [{ tenant_id: tenant, project_id: 'p1', user_id: '', error_span_ids: [], ...LATE }],
        format: 'JSONEachRow',
      });
    }
    expect(await migrateClickHouse(client, dir)).toEqual({ applied: [MIGRATION], alreadyApplied: expect.any(Number) });
    expect(await merged()).toEqual(oldTable ? [...SHOWN, LATE_SHOWN] : SHOWN);
    expect(await tableSql()).toContain('index_granularity_bytes = 65536');
  });
});
