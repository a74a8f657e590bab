import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

jest.setTimeout(120_000);

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Opens the embedded engine as the all-in-one does (createClickHouseClient, built in dist/), with a
 * query condition cache of `cacheMiB`, in a process of its own: the engine takes its arguments when
 * it starts, and this test process's engine was started by the suites run before this one. Makes
 * `filters` new filters (each matching nothing, with a value of its own, as a round's trace ids
 * are) over `parts` parts, then reports the engine's setting and its cache.
 */
async function probeEngine(options: { cacheMiB: number; parts: number; filters: number }) {
  const script = `
    const { createClickHouseClient } = require('./dist/libs/clickhouse/src/clickhouse.client.js');
    const [dir, cacheMiB, parts, filters] = process.argv.slice(1);
    const client = createClickHouseClient({ kind: 'embedded', path: dir, conditionCacheMiB: Number(cacheMiB) });
    const rows = async (query) => (await client.query({ query, format: 'JSONEachRow' })).json();
    (async () => {
      await client.command({ query: 'CREATE TABLE probe (n UInt64, s String) ENGINE = MergeTree ORDER BY n SETTINGS index_granularity = 100' });
      await client.command({ query: 'SYSTEM STOP MERGES probe' });
      for (let part = 0; part < Number(parts); part++)
        await client.command({ query: 'INSERT INTO probe SELECT number + ' + part * 1000 + ', toString(number) FROM numbers(1000)' });
      let matched = 0;
      for (let i = 0; i < Number(filters); i++)
        matched += Number((await rows("SELECT count() AS n FROM probe WHERE s = 'absent-" + i + "'"))[0].n);
      const [setting] = await rows("SELECT value FROM system.server_settings WHERE name = 'query_condition_cache_size'");
      const metrics = Object.fromEntries((await rows(
        "SELECT metric, value FROM system.metrics WHERE metric IN ('QueryConditionCacheEntries', 'QueryConditionCacheBytes')",
      )).map((row) => [row.metric, Number(row.value)]));
      process.stdout.write(JSON.stringify({ matched, sizeBytes: Number(setting.value), entries: metrics.QueryConditionCacheEntries, bytes: metrics.QueryConditionCacheBytes }));
      await client.close();
    })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });
  `;
  const dir = path.join(root, `engine-${options.cacheMiB}`);
  const args = [dir, options.cacheMiB, options.parts, options.filters].map(String);
  const { stdout } = await run(process.execPath, ['-e', script, ...args], { cwd: ROOT });
  return JSON.parse(stdout) as { matched: number; sizeBytes: number; entries: number; bytes: number };
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'spanforge-condition-cache-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The embedded engine's query condition cache is capped at CLICKHOUSE_CONDITION_CACHE_MIB (libs/clickhouse/src/clickhouse.client.ts). */
describe("the embedded engine's query condition cache", () => {
  it('stays within its size when new filters would leave more, keeping the most recent entries', async () => {
    const parts = 40;
    const filters = 600;
    const probe = await probeEngine({ cacheMiB: 1, parts, filters });
    expect(probe.matched).toBe(0);
    expect(probe.sizeBytes).toBe(1024 * 1024);
    expect(probe.bytes).toBeGreaterThan(0);
    expect(probe.bytes).toBeLessThanOrEqual(1024 * 1024);
    // Each filter left an entry per part; the least recently used went once the cap was reached.
    expect(probe.entries).toBeGreaterThan(0);
    expect(probe.entries).toBeLessThan(parts * filters);
  });

  it('keeps an entry per part for each new filter while under its size', async () => {
    const parts = 5;
    const filters = 20;
    const probe = await probeEngine({ cacheMiB: 2, parts, filters });
    expect(probe.sizeBytes).toBe(2 * 1024 * 1024);
    expect(probe.entries).toBe(parts * filters);
  });
});
