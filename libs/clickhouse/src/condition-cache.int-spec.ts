import path from 'node:path';
import { workerDataDir } from '@spanforge/testing';
import { createClickHouseClient, type ClickHouseClient } from './clickhouse.client';
import { emptyConditionCacheEvery } from './condition-cache';

jest.setTimeout(60_000);

/**
 * The embedded engine's query condition cache on real chDB: each new filter leaves an entry per
 * part it read, and the emptying every CLICKHOUSE_CONDITION_CACHE_DROP_SECONDS hands them back.
 */
describe("emptying the embedded engine's query condition cache", () => {
  let client: ClickHouseClient;
  const PARTS = 5;
  const FILTERS = 20;

  const cacheEntries = async () => {
    const result = await client.query({
      query: "SELECT value FROM system.metrics WHERE metric = 'QueryConditionCacheEntries'",
      format: 'JSONEachRow',
    });
    return Number((await result.json<{ value: string }>())[0]!.value);
  };

  beforeAll(async () => {
    client = createClickHouseClient({ kind: 'embedded', path: path.join(workerDataDir(), 'clickhouse') });
    await client.command({
      query:
        'CREATE TABLE IF NOT EXISTS condition_cache_probe (n UInt64, s String) ENGINE = MergeTree ORDER BY n SETTINGS index_granularity = 128',
    });
    await client.command({ query: 'SYSTEM STOP MERGES condition_cache_probe' });
    for (let part = 0; part < PARTS; part++)
      await client.command({
        query: `INSERT INTO condition_cache_probe SELECT number + ${part * 1000}, toString(number) FROM numbers(1000)`,
      });
  });
  afterAll(async () => {
    await client.command({ query: 'DROP TABLE IF EXISTS condition_cache_probe' });
    await client.close();
  });

  it('holds an entry per part for each new filter until emptied, then none', async () => {
    await client.command({ query: 'SYSTEM DROP QUERY CONDITION CACHE' });
    // Filters that match nothing, each new (each with a value of its own, as a round's trace ids are).
    for (let i = 0; i < FILTERS; i++) {
      const result = await client.query({
        query: `SELECT count() AS n FROM condition_cache_probe WHERE s = 'absent-${i}'`,
        format: 'JSONEachRow',
      });
      expect((await result.json<{ n: number | string }>()).map((row) => Number(row.n))).toEqual([0]);
    }
    expect(await cacheEntries()).toBeGreaterThanOrEqual(PARTS * FILTERS);

    const logged: string[] = [];
    const emptying = emptyConditionCacheEvery(client, 1, { info: (m) => logged.push(m), warn: (m) => logged.push(m) });
    try {
      const deadline = Date.now() + 10_000;
      while ((await cacheEntries()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      emptying.stop();
      await emptying.idle();
    }
    expect(await cacheEntries()).toBe(0);
    // No failure was logged: only the line that says it runs.
    expect(logged).toEqual(["empties the engine's query condition cache every 1 s (CLICKHOUSE_CONDITION_CACHE_DROP_SECONDS; 0: never)"]);
  });
});
