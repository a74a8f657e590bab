import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/processes';

jest.setTimeout(120_000);

const run = promisify(execFile);

/**
 * Opens the embedded engine as the all-in-one does (createClickHouseClient, built in dist/), with a
 * query condition cache of `cacheMiB`, in a process of its own: the engine takes its arguments when
 * it starts, and this test process's engine was started by the suites run before this one. Makes
 * `filters` new filters (each matching nothing, with a value of its own, as a round's trace ids
 * are) over `parts` parts, and reports the engine's setting and its cache. Then runs the last filter
 * again, and the first, and reports the cache's hits (one per part whose entry it found) of each.
 * `plainFirst`: a connection without arguments starts the engine before the client is opened.
 */
async function probeEngine(options: { cacheMiB: number; parts: number; filters: number; plainFirst?: boolean }) {
  const client = path.join(ROOT, 'dist', 'libs', 'clickhouse', 'src', 'clickhouse.client.js');
  if (!existsSync(client)) throw new Error(`${client} is missing: run \`npm run build\` first (npm test does)`);
  const script = `
    const { createClickHouseClient, engineSettings } = require(process.argv[1]);
    const [dir, cacheMiB, parts, filters, plainFirst] = process.argv.slice(2);
    const plain = plainFirst === 'true' ? require('chdb/connection').createChdbConnection({ path: dir }) : undefined;
    const client = createClickHouseClient({ kind: 'embedded', path: dir, conditionCacheMiB: Number(cacheMiB) });
    const rows = async (query) => (await client.query({ query, format: 'JSONEachRow' })).json();
    const filter = async (i) => Number((await rows("SELECT count() AS n FROM probe WHERE s = 'absent-" + i + "'"))[0].n);
    const figures = async () => Object.fromEntries((await rows(
      "SELECT metric, value FROM system.metrics WHERE metric IN ('QueryConditionCacheEntries', 'QueryConditionCacheBytes') " +
      "UNION ALL SELECT event AS metric, value FROM system.events WHERE event = 'QueryConditionCacheHits'",
    )).map((row) => [row.metric, Number(row.value)]));
    const hitsOf = async (i) => {
      const before = (await figures()).QueryConditionCacheHits ?? 0;
      await filter(i);
      return ((await figures()).QueryConditionCacheHits ?? 0) - before;
    };
    (async () => {
      await client.command({ query: 'CREATE TABLE probe (n UInt64, s String) ENGINE = MergeTree ORDER BY n SETTINGS index_granularity = 100' });
      await client.command({ query: 'SYSTEM STOP MERGES probe' });
      for (let part = 0; part < Number(parts); part++)
        await client.command({ query: 'INSERT INTO probe SELECT number + ' + part * 1000 + ', toString(number) FROM numbers(1000)' });
      let matched = 0;
      for (let i = 0; i < Number(filters); i++) matched += await filter(i);
      const sizeBytes = (await engineSettings(client)).conditionCacheMiB * 1024 * 1024;
      const cache = await figures();
      const lastAgain = await hitsOf(Number(filters) - 1);
      const firstAgain = await hitsOf(0);
      const answer = { matched, sizeBytes, entries: cache.QueryConditionCacheEntries, bytes: cache.QueryConditionCacheBytes, lastAgain, firstAgain };
      process.stdout.write(JSON.stringify(answer));
      await client.close();
      await plain?.close();
    })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });
  `;
  const dir = path.join(root, `engine-${options.cacheMiB}-${options.plainFirst ? 'plain-first' : 'client-first'}`);
  const args = [client, dir, options.cacheMiB, options.parts, options.filters, options.plainFirst === true].map(String);
  const { stdout } = await run(process.execPath, ['-e', script, ...args], { cwd: ROOT });
  return JSON.parse(stdout) as {
    matched: number;
    sizeBytes: number;
    entries: number;
    bytes: number;
    lastAgain: number;
    firstAgain: number;
  };
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'spanforge-condition-cache-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The embedded engine's query condition cache is capped at CLICKHOUSE_CONDITION_CACHE_MIB (libs/clickhouse/src/clickhouse.client.ts). */
describe("the embedded engine's query condition cache", () => {
  it('stays within its size when new filters would leave more, keeping the newest entries', async () => {
    const parts = 40;
    const filters = 600;
    const probe = await probeEngine({ cacheMiB: 1, parts, filters });
    expect(probe.matched).toBe(0);
    expect(probe.sizeBytes).toBe(1024 * 1024);
    expect(probe.bytes).toBeGreaterThan(0);
    expect(probe.bytes).toBeLessThanOrEqual(1024 * 1024);
    // Each filter left an entry per part; the oldest went once the cap was reached, the newest stayed.
    expect(probe.entries).toBeGreaterThan(0);
    expect(probe.entries).toBeLessThan(parts * filters);
    expect(probe.lastAgain).toBe(parts);
    expect(probe.firstAgain).toBe(0);
  });

  it('keeps an entry per part for each new filter while under its size', async () => {
    const parts = 5;
    const filters = 20;
    const probe = await probeEngine({ cacheMiB: 2, parts, filters });
    expect(probe.sizeBytes).toBe(2 * 1024 * 1024);
    expect(probe.entries).toBe(parts * filters);
    expect(probe.lastAgain).toBe(parts);
    expect(probe.firstAgain).toBe(parts);
  });

  it('is the one the engine started with when another connection started it first (whose arguments were none)', async () => {
    const probe = await probeEngine({ cacheMiB: 1, parts: 1, filters: 1, plainFirst: true });
    // The engine's own default, 100 MiB: the client's arguments came too late, and did not fail it.
    expect(probe.sizeBytes).toBe(100 * 1024 * 1024);
    expect(probe.entries).toBe(1);
  });
});
