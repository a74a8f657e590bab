import { readdirSync } from 'node:fs';
import path from 'node:path';
import { workerDataDir } from '@spanforge/testing';
import { createClickHouseClient, type ClickHouseClient } from './clickhouse.client';
import { ROWS_IN_FILE_FROM_CHARS } from './insert-rows-file';
import { insertLines } from './statements';

jest.setTimeout(60_000);

/**
 * An embedded insert's rows, from ROWS_IN_FILE_FROM_CHARS characters on, go to the engine in a
 * file (libs/clickhouse/src/insert-rows-file.ts): stored as the same rows in the statement's text
 * would be, refused with the same reasons, and the file gone after either.
 */
describe("an embedded insert's rows in a file", () => {
  const engineDir = path.join(workerDataDir(), 'clickhouse');
  const rowsDir = path.join(engineDir, 'insert-rows');
  let client: ClickHouseClient;
  // Defaults and a materialized column: what the format fills in for a field a row leaves out.
  const columns = "n UInt64, s String, d String DEFAULT concat('d-', s), m UInt64 MATERIALIZED n * 2, t DateTime64(3, 'UTC')";

  beforeAll(async () => {
    client = createClickHouseClient({ kind: 'embedded', path: engineDir });
    for (const table of ['rows_in_text', 'rows_in_file', 'rows_inserted'])
      await client.command({ query: `CREATE OR REPLACE TABLE ${table} (${columns}) ENGINE = MergeTree ORDER BY n` });
  });
  afterAll(async () => {
    for (const table of ['rows_in_text', 'rows_in_file', 'rows_inserted']) await client.command({ query: `DROP TABLE IF EXISTS ${table}` });
    await client.close();
  });

  /** One export's lines: every other row leaves `d` out, and strings carry quotes, escapes and UTF-8. */
  const exportLines = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => {
      const n = from + i;
      const row: Record<string, unknown> = {
        n,
        s: `row ${n} "quoted" \\ é€😀 ${'x'.repeat(n % 50)}`,
        t: `2026-12-07 01:${String(n % 60).padStart(2, '0')}:00.123`,
      };
      if (n % 2 === 0) row.d = `given ${n}`;
      return `${JSON.stringify(row)}\n`;
    }).join('');
  /** The error `statement` fails with (it fails the test when it succeeds). */
  const refusalOf = (statement: Promise<unknown>) =>
    statement.then(
      () => {
        throw new Error('the bad row was taken');
      },
      (error: Error & { code?: string }) => error,
    );
  const countOf = async (query: string) =>
    ((await (await client.query({ query, format: 'JSONEachRow' })).json()) as Array<{ total: number }>)[0]!.total;
  const read = async (table: string) =>
    (await client.query({ query: `SELECT n, s, d, m, toString(t) AS t FROM ${table} ORDER BY n`, format: 'JSONEachRow' })).json();

  it('stores the rows as it does from the text, with the same defaults, and leaves no file', async () => {
    // 40 exports of 200 rows: about 30 KB each, so each alone goes in the text, all together in a file.
    const exports = Array.from({ length: 40 }, (_, i) => exportLines(i * 200, 200));
    expect(exports[0]!.length).toBeLessThan(ROWS_IN_FILE_FROM_CHARS);
    expect(exports.join('').length).toBeGreaterThan(4 * ROWS_IN_FILE_FROM_CHARS);
    for (const text of exports) await insertLines(client, 'INSERT INTO rows_in_text FORMAT JSONEachRow', [text], 'test.rows_in_text');
    await insertLines(client, 'INSERT INTO rows_in_file FORMAT JSONEachRow', exports, 'test.rows_in_file');

    const inFile = await read('rows_in_file');
    expect(inFile).toHaveLength(8_000);
    expect(inFile).toEqual(await read('rows_in_text'));
    expect(inFile[1]).toEqual({
      n: 1,
      s: 'row 1 "quoted" \\ é€😀 x',
      d: 'd-row 1 "quoted" \\ é€😀 x',
      m: 2,
      t: '2026-12-07 01:01:00.123',
    });
    expect(readdirSync(rowsDir)).toEqual([]);
  });

  it("stores the rows of the client's insert of many objects, read from a file", async () => {
    const values = Array.from({ length: 3_000 }, (_, n) => ({ n, s: `object ${n} ${'y'.repeat(30)}`, t: '2026-12-07 02:00:00.000' }));
    expect(values.map((value) => JSON.stringify(value)).join('\n').length).toBeGreaterThan(ROWS_IN_FILE_FROM_CHARS);
    await client.insert({ table: 'rows_inserted', values, format: 'JSONEachRow' });
    const stored = (await (
      await client.query({ query: 'SELECT count() AS rows, sum(n) AS total, max(d) AS last FROM rows_inserted', format: 'JSONEachRow' })
    ).json()) as Array<{ rows: number; total: number; last: string }>;
    expect(stored).toEqual([{ rows: 3_000, total: (2_999 * 3_000) / 2, last: `d-object 999 ${'y'.repeat(30)}` }]);
    expect(readdirSync(rowsDir)).toEqual([]);
    // The same insert with a bad last row: refused from the file (its message says so), nothing of it stored.
    const refused = await refusalOf(
      client.insert({
        table: 'rows_inserted',
        values: [...values, { n: 'not a number', s: 'x', t: '2026-12-07 02:00:00.000' }],
        format: 'JSONEachRow',
      }),
    );
    expect(refused.message).toContain("(in file/uri the insert's rows)");
    expect(readdirSync(rowsDir)).toEqual([]);
    expect(await countOf('SELECT count() AS total FROM rows_inserted')).toBe(3_000);
  });

  it('refuses a bad row with the reason and code it has in the text, naming no file, and leaves no file', async () => {
    const bad = `${exportLines(100_000, 1_000)}{"n":"not a number","s":"x","t":"2026-12-07 00:00:00"}\n`;
    expect(bad.length).toBeGreaterThan(ROWS_IN_FILE_FROM_CHARS);
    const refusal = (lines: string[]) =>
      refusalOf(insertLines(client, 'INSERT INTO rows_in_file FORMAT JSONEachRow', lines, 'test.bad_row'));
    const fromFile = await refusal([bad]);
    expect(fromFile.code).toBe('27');
    expect(fromFile.message).toContain('Cannot parse input');
    expect(fromFile.message).toContain('(at row 1001)');
    // The engine read the rows from the file, which the message names as the insert's rows.
    expect(fromFile.message).toContain("(in file/uri the insert's rows)");
    expect(fromFile.message).not.toContain(rowsDir);
    // The same row alone, in the text: the same code.
    const inText = await refusal(['{"n":"not a number","s":"x","t":"2026-12-07 00:00:00"}\n']);
    expect(inText.code).toBe('27');
    expect(inText.message).not.toContain('file');
    expect(readdirSync(rowsDir)).toEqual([]);
    // Nothing of the refused insert was stored.
    expect(await countOf('SELECT count() AS total FROM rows_in_file WHERE n >= 100000')).toBe(0);
  });
});
