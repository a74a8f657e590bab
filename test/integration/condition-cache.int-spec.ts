import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClickHouseClient, emptyConditionCacheEvery, type ClickHouseClient } from '@spanforge/clickhouse';
import { startChdbHttpServer, type ChdbHttpServer } from '../support/chdb-http-server';

jest.setTimeout(90_000);

/**
 * The embedded engine's query condition cache (libs/clickhouse/src/condition-cache.ts), on real
 * chDB: each new filter leaves an entry per part it read, and the emptying every
 * CLICKHOUSE_CONDITION_CACHE_DROP_SECONDS hands them back. The engine runs in a process of its own
 * (the test ClickHouse endpoint): the cache is the engine's, one per process, and this process's
 * engine is shared by the suites run before this one, whose statements would add entries of their own.
 */
describe("emptying the engine's query condition cache", () => {
  let root: string;
  let server: ChdbHttpServer;
  let client: ClickHouseClient;
  const PARTS = 5;
  const FILTERS = 20;

  const cacheEntries = async () => {
    const result = await client.query({
      query: "SELECT value FROM system.metrics WHERE metric = 'QueryConditionCacheEntries'",
      format: 'JSONEachRow',
    });
    return Number((await result.json<{ value: string | number }>())[0]!.value);
  };

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'spanforge-condition-cache-'));
    server = await startChdbHttpServer(path.join(root, 'clickhouse'), ['probe']);
    client = createClickHouseClient({ kind: 'server', url: server.url, username: 'default', password: '', database: 'probe' });
    await client.command({
      query: 'CREATE TABLE condition_cache_probe (n UInt64, s String) ENGINE = MergeTree ORDER BY n SETTINGS index_granularity = 128',
    });
    await client.command({ query: 'SYSTEM STOP MERGES condition_cache_probe' });
    for (let part = 0; part < PARTS; part++)
      await client.command({
        query: `INSERT INTO condition_cache_probe SELECT number + ${part * 1000}, toString(number) FROM numbers(1000)`,
      });
  });
  afterAll(async () => {
    await client?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('holds an entry per part for each new filter until emptied, then none', async () => {
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
