import path from 'node:path';
import { createClickHouseClient, type ClickHouseClient } from '@spanforge/clickhouse';
import { DEFAULT_QUERY_LIMITS } from '@spanforge/config';
import { ErrorCode } from '@spanforge/errors';
import { workerDataDir } from '@spanforge/testing';
import { ScopedClickHouse } from './scoped-clickhouse';

const scope = { tenantId: 'tenant-a', projectId: 'project-a' };
/** 1,000 rows that carry the scope's columns, so the scoped layer accepts the SQL. */
const THOUSAND_ROWS = `SELECT count() AS n FROM (SELECT number, {tenantId:String} AS tenant_id, {projectId:String} AS project_id FROM numbers(1000))
  WHERE tenant_id = {tenantId:String} AND project_id = {projectId:String}`;

const SETTINGS = [
  'max_rows_to_read',
  'max_execution_time',
  'max_memory_usage',
  'output_format_json_quote_64bit_integers',
  'log_comment',
  'max_threads',
];

/** The named settings of the session whose value is not the engine's default. */
async function changedSettings(client: ClickHouseClient): Promise<Array<{ name: string; value: string }>> {
  const result = await client.query({
    query: 'SELECT name, value FROM system.settings WHERE name IN {names:Array(String)} AND value != default ORDER BY name',
    query_params: { names: SETTINGS },
    format: 'JSONEachRow',
  });
  return result.json();
}

describe('ScopedClickHouse limits (embedded chDB)', () => {
  let client: ClickHouseClient;

  beforeAll(() => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
  });
  afterAll(() => client.close());

  it('refuses a query that reads more rows than its limit as QUERY_TOO_EXPENSIVE', async () => {
    const tight = new ScopedClickHouse(client, scope, {
      ...DEFAULT_QUERY_LIMITS,
      maxExecutionSeconds: 10,
      maxMemoryBytes: 2 ** 30,
      maxRowsToRead: 100,
    });
    await expect(tight.rows('test.thousand_rows', THOUSAND_ROWS)).rejects.toMatchObject({ code: ErrorCode.QUERY_TOO_EXPENSIVE });
    const roomy = new ScopedClickHouse(client, scope, {
      ...DEFAULT_QUERY_LIMITS,
      maxExecutionSeconds: 10,
      maxMemoryBytes: 2 ** 30,
      maxRowsToRead: 1000,
    });
    expect(await roomy.rows<{ n: number }>('test.thousand_rows', THOUSAND_ROWS)).toEqual([{ n: 1000 }]);
  });

  it('refuses an answer larger than QUERY_MAX_RESULT_MB as QUERY_TOO_EXPENSIVE, and parses one within it', async () => {
    const rows = `SELECT number AS n, {tenantId:String} AS tenant_id FROM numbers(100)`;
    // Each row is {"n":<number>,"tenant_id":"tenant-a"} and a newline.
    const answerBytes = Array.from({ length: 100 }, (_, n) => `${JSON.stringify({ n, tenant_id: scope.tenantId })}\n`).join('').length;
    const under = new ScopedClickHouse(client, scope, { ...DEFAULT_QUERY_LIMITS, maxResultBytes: answerBytes });
    expect((await under.rows<{ n: number }>('test.hundred_rows', rows)).map((r) => r.n)).toEqual(Array.from({ length: 100 }, (_, n) => n));
    const over = new ScopedClickHouse(client, scope, { ...DEFAULT_QUERY_LIMITS, maxResultBytes: answerBytes - 1 });
    await expect(over.rows('test.hundred_rows', rows)).rejects.toMatchObject({
      code: ErrorCode.QUERY_TOO_EXPENSIVE,
      message: expect.stringMatching(/query test.hundred_rows answers more than/),
    });
  });

  it('leaves no limit in force for the statements that follow (chDB has one session per process)', async () => {
    const tight = new ScopedClickHouse(client, scope, {
      ...DEFAULT_QUERY_LIMITS,
      maxExecutionSeconds: 3,
      maxMemoryBytes: 2 ** 30,
      maxRowsToRead: 100,
    });
    await expect(tight.rows('test.thousand_rows', THOUSAND_ROWS)).rejects.toMatchObject({ code: ErrorCode.QUERY_TOO_EXPENSIVE });
    // A statement outside the query layer (the worker's upkeep, say) reads past that query's limit.
    const result = await client.query({ query: 'SELECT count() AS n FROM numbers(1000)', format: 'JSONEachRow' });
    expect((await result.json<{ n: number | string }>()).map((r) => Number(r.n))).toEqual([1000]);
    await new ScopedClickHouse(client, scope).rows('test.thousand_rows', THOUSAND_ROWS);
    expect(await changedSettings(client)).toEqual([]);
  });

  it('runs on an embedded client that refuses per-call settings, which chDB would keep for the whole process, and drops log_comment', async () => {
    await expect(client.query({ query: 'SELECT 1', format: 'JSONEachRow', clickhouse_settings: { max_threads: 1 } })).rejects.toThrow(
      /no per-call settings \(max_threads\)/,
    );
    await client.command({ query: 'SELECT 1', clickhouse_settings: { log_comment: 'named' } });
    expect(await changedSettings(client)).toEqual([]);
  });
});
